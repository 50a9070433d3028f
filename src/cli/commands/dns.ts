// `kdp dns lookup` and `kdp dns serve`: kdp's cluster DNS server from the command line.
// `lookup` without --server runs the same server the coredns pods run, in this process on
// loopback, over the cluster's records (any mode, the virtual one too) and asks it; with
// --server it asks that server. Short names go through the pod search list (ndots:5).

import { readFileSync } from 'node:fs';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { ask, formatRecord, recordJson, type Reply } from '../../dns/client.js';
import { answerOptionsOf, loadClusterDns } from '../../dns/cluster-view.js';
import { DEFAULT_SERVE_CONFIG } from '../../dns/corefile.js';
import { buildForwarder } from '../../dns/forward.js';
import { buildDnsHandler, staticSource } from '../../dns/handler.js';
import { parseDnsArgs, startDnsFromFlags, type DnsMainFlags } from '../../dns/main.js';
import { canonicalIP } from '../../api/net.js';
import { reverseName } from '../../dns/names.js';
import { searchNames } from '../../dns/resolve.js';
import { resolveUpstreams } from '../../dns/serve.js';
import { listenDns } from '../../dns/server.js';
import { kdpError } from '../../errors.js';
import type { CliIO, Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

const TYPES = ['A', 'AAAA', 'SRV', 'PTR', 'CNAME', 'TXT', 'SOA', 'NS', 'ANY'];
const ANY_TYPES = ['A', 'AAAA', 'CNAME', 'SRV', 'TXT'];

interface Asker {
  readonly via: string;
  /** The cluster domain short names are searched in. */
  readonly zone: string;
  ask(name: string, type: string): Promise<Reply>;
  close(): Promise<void>;
}

async function inProcessAsker(flags: Record<string, unknown>, io: CliIO, tcp: boolean): Promise<Asker> {
  const paths = dataDirPaths(resolveDataDir(flags['data-dir'] as string | undefined, io.env));
  const info = readClusterInfo(paths);
  const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
  try {
    const { config: cfg, index } = await loadClusterDns(client);
    const upstreams = resolveUpstreams(cfg, '127.0.0.1', (p) => readFileSync(p, 'utf8'), () => undefined);
    const forwarder = cfg.forward ? buildForwarder({ upstreams }) : undefined;
    const handler = buildDnsHandler({ source: staticSource(index), forwarder,
      answer: answerOptionsOf(cfg),
      log: (l) => io.err(`kdp dns: ${l}\n`) });
    const server = await listenDns(handler, { host: '127.0.0.1', port: 0 });
    return {
      via: `kdp's DNS server on 127.0.0.1:${server.port} over the cluster's records`, zone: cfg.zone,
      ask: (name, type) => ask(name, type, { host: '127.0.0.1', port: server.port, tcp }),
      async close() {
        await server.close();
        handler.close();
        forwarder?.close();
        client.close();
      },
    };
  } catch (e) {
    client.close();
    throw e;
  }
}

function serverAsker(text: string, tcp: boolean, timeoutMs: number): Asker {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? /^([^:]+)(?::(\d+))?$/.exec(text)
    ?? /^([^[\]]*:[^[\]]*)()$/.exec(text);
  const host = m ? canonicalIP(m[1]!) : undefined;
  const port = m?.[2] ? Number(m[2]) : 53;
  if (!host || !(port > 0 && port < 65536)) {
    throw kdpError('KDP_CONFIG', `--server: "${text}" is not IP[:PORT] (IPv6 as [IP]:PORT)`);
  }
  return { via: `${text}`, zone: DEFAULT_SERVE_CONFIG.zone, ask: (name, type) => ask(name, type, { host, port, tcp, timeoutMs }),
    close: async () => undefined };
}

/** Asks every type of `types` (ANY: the union), merging the sections. */
async function askAll(a: Asker, name: string, types: readonly string[]): Promise<Reply> {
  const replies = await Promise.all(types.map((t) => a.ask(name, t)));
  const ok = replies.filter((r) => r.rcode === 'NOERROR');
  const first = ok[0] ?? replies[0]!;
  if (replies.length === 1) return first;
  return { ...first, answers: ok.flatMap((r) => r.answers),
    additionals: ok.flatMap((r) => r.additionals),
    authorities: ok.some((r) => r.answers.length) ? [] : first.authorities };
}

export const dnsLookupCommand: Command = {
  name: 'dns lookup',
  summary: 'resolve a name as the cluster DNS answers it (kdp\'s DNS server, in-process over the cluster\'s records)',
  args: 'NAME',
  exits: [
    { code: 0, meaning: 'the answer\'s rcode is NOERROR' },
    { code: 1, meaning: 'another rcode (NXDOMAIN, SERVFAIL, …; printed), or the command failed' },
  ],
  flags: [
    { name: 'type', short: 't', type: 'string', default: 'A', help: `record type: ${TYPES.join(' | ')} (an IP: PTR)` },
    { name: 'server', type: 'string', help: 'ask this DNS server (IP[:PORT]) instead' },
    { name: 'namespace', short: 'n', type: 'string', default: 'default', help: 'search list of a pod in this namespace, for short names' },
    { name: 'tcp', type: 'boolean', default: false, help: 'ask over TCP' },
    { name: 'timeout', type: 'number', default: 2000, help: 'per question (ms)' },
    { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' },
    DATA_DIR_FLAG,
  ],
  async run(args, io) {
    if (args.positionals.length !== 1) throw kdpError('KDP_CONFIG', 'usage: kdp dns lookup NAME [--type T]');
    let name = args.positionals[0]!;
    let type = String(args.flags.type).toUpperCase();
    if (!TYPES.includes(type)) throw kdpError('KDP_CONFIG', `--type: "${args.flags.type}" is not one of ${TYPES.join(', ')}`);
    const ip = canonicalIP(name);
    if (ip) {
      name = `${reverseName(ip)!}.`;
      type = 'PTR';
    }
    const tcp = args.flags.tcp as boolean;
    const asker = args.flags.server ? serverAsker(args.flags.server as string, tcp, args.flags.timeout as number)
      : await inProcessAsker(args.flags, io, tcp);
    try {
      const types = type === 'ANY' ? [...ANY_TYPES, ...(ip ? ['PTR'] : [])] : [type];
      const candidates = searchNames(name, { namespace: String(args.flags.namespace),
        answer: { ...answerOptionsOf(DEFAULT_SERVE_CONFIG), zone: asker.zone } });
      let reply: Reply | undefined;
      let asked = candidates[0]!;
      for (const n of candidates) {
        asked = n;
        reply = await askAll(asker, n, types);
        if (reply.rcode !== 'NXDOMAIN') break;
      }
      const r = reply!;
      if (args.flags.output === 'json') {
        io.out(`${JSON.stringify({ name: `${asked}.`, type, rcode: r.rcode, authoritative: r.authoritative,
          truncatedRetriedOverTcp: r.retriedOverTcp, server: asker.via, answers: r.answers.map(recordJson),
          authority: r.authorities.map(recordJson), additional: r.additionals.map(recordJson) }, null, 2)}\n`);
      } else {
        const flags = [r.authoritative ? 'authoritative' : '', r.retriedOverTcp ? 'truncated, retried over TCP' : '']
          .filter(Boolean).join(', ');
        io.out(`;; ${asked}. ${type}: ${r.rcode}${flags ? ` (${flags})` : ''} from ${asker.via}\n`);
        for (const a of r.answers) io.out(`${formatRecord(a)}\n`);
        if (r.additionals.length) {
          io.out(';; additional\n');
          for (const a of r.additionals) io.out(`${formatRecord(a)}\n`);
        }
        if (!r.answers.length) for (const a of r.authorities) io.out(`;; ${formatRecord(a)}\n`);
      }
      return r.rcode === 'NOERROR' ? 0 : 1;
    } finally {
      await asker.close();
    }
  },
};

const SERVE_FLAGS = ['conf', 'kubeconfig', 'listen', 'port', 'zone', 'ttl', 'pods', 'resolv-conf',
  'health', 'ready', 'metrics'] as const;

export const dnsServeCommand: Command = {
  name: 'dns serve',
  summary: 'run kdp\'s cluster DNS server (what the coredns pods run) against a cluster',
  flags: [
    { name: 'conf', type: 'string', help: 'a Corefile (as the coredns ConfigMap); default the kubernetes plugin\'s defaults' },
    { name: 'kubeconfig', type: 'string', help: 'API server and credentials (default: in-cluster, else the data dir\'s)' },
    { name: 'listen', type: 'string', help: 'bind address of every listener (default 127.0.0.1)' },
    { name: 'port', type: 'number', help: 'DNS port (default 53; 0: any free)' },
    { name: 'zone', type: 'string', help: 'cluster domain (default cluster.local)' },
    { name: 'ttl', type: 'number', help: 'TTL of every record (default 5)' },
    { name: 'pods', type: 'string', help: 'disabled | insecure | verified (default insecure)' },
    { name: 'resolv-conf', type: 'string', help: 'upstream resolvers from this file (default /etc/resolv.conf)' },
    { name: 'health', type: 'string', help: '[HOST]:PORT of /health (default :8080; "" off)' },
    { name: 'ready', type: 'string', help: '[HOST]:PORT of /ready (default :8181; "" off)' },
    { name: 'metrics', type: 'string', help: '[HOST]:PORT of /metrics (default :9153; "" off)' },
    DATA_DIR_FLAG,
  ],
  async run(args, io) {
    const argv: string[] = [];
    for (const f of SERVE_FLAGS) {
      const v = args.flags[f];
      if (v !== undefined) argv.push(`--${f}`, String(v));
    }
    let flags: DnsMainFlags = parseDnsArgs(argv);
    if (!flags.kubeconfig && !io.env.KUBERNETES_SERVICE_HOST) {
      const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
      flags = { ...flags, kubeconfig: readClusterInfo(paths).kubeconfig };
    }
    const running = await startDnsFromFlags({ listen: '127.0.0.1', ...flags }, io.env,
      (l) => io.out(`${l}\n`));
    await io.interrupted;
    await running.close();
    return 0;
  },
};
