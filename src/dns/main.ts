// The `kdp/dns` image's program (bin/kdp-dns.js) and `kdp dns serve`: kdp's cluster DNS
// server. Flags are CoreDNS's where CoreDNS has one (`-conf FILE`, as kubeadm's Deployment
// passes) plus the client's: in a pod it reads the in-cluster configuration (service-account
// token, CA, KUBERNETES_SERVICE_HOST/PORT); on the host `--kubeconfig FILE` and `--listen`
// (default 127.0.0.1, as every kdp server) for loopback use.
//
//   -conf FILE          a Corefile (kubeadm's ConfigMap); missing: the defaults, said in the log
//   --kubeconfig FILE   API server and credentials (default: in-cluster)
//   --listen ADDR       bind address of every listener ('' or `::`: all; default in a pod: all)
//   --port N            DNS port (default 53; 0: any free)
//   --zone Z --ttl N --pods MODE --resolv-conf FILE   when there is no Corefile
//   --health ADDR:PORT --ready ADDR:PORT --metrics ADDR:PORT   ('' turns one off)

import { existsSync, readFileSync } from 'node:fs';
import { buildHttpClient } from '../client/http-client.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { isKdpError, kdpError } from '../errors.js';
import { DEFAULT_SERVE_CONFIG, parseCorefile, type DnsServeConfig, type HostPort } from './corefile.js';
import { inClusterConfig } from './in-cluster.js';
import type { PodMode } from './lookup.js';
import { startDns, type RunningDns } from './serve.js';

export interface DnsMainFlags {
  readonly conf?: string;
  readonly kubeconfig?: string;
  readonly listen?: string;
  readonly port?: number;
  readonly zone?: string;
  readonly ttl?: number;
  readonly pods?: string;
  readonly resolvConf?: string;
  readonly health?: string;
  readonly ready?: string;
  readonly metrics?: string;
}

const FLAG_NAMES: Record<string, keyof DnsMainFlags> = {
  conf: 'conf', kubeconfig: 'kubeconfig', listen: 'listen', port: 'port', zone: 'zone', ttl: 'ttl',
  pods: 'pods', 'resolv-conf': 'resolvConf', health: 'health', ready: 'ready', metrics: 'metrics',
};

/** `-conf X`, `--conf X`, `--conf=X` alike (CoreDNS takes single-dash flags). */
export function parseDnsArgs(argv: readonly string[]): DnsMainFlags {
  const out: Record<string, string | number> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^--?([a-z-]+)(?:=(.*))?$/.exec(a);
    const name = m ? FLAG_NAMES[m[1]!] : undefined;
    if (!m || !name) throw kdpError('KDP_CONFIG', `kdp-dns: unknown argument ${JSON.stringify(a)}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw kdpError('KDP_CONFIG', `kdp-dns: ${a} needs a value`);
    if (name === 'port' || name === 'ttl') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0 || n > 65535) {
        throw kdpError('KDP_CONFIG', `kdp-dns: --${m[1]}: ${JSON.stringify(value)} is not a number`);
      }
      out[name] = n;
    } else out[name] = value;
  }
  return out as DnsMainFlags;
}

function endpoint(text: string | undefined, def: HostPort | undefined, what: string): HostPort | undefined {
  if (text === undefined) return def;
  if (text === '') return undefined;
  const i = text.lastIndexOf(':');
  const port = Number(text.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw kdpError('KDP_CONFIG', `kdp-dns: --${what}: ${JSON.stringify(text)} is not [HOST]:PORT`);
  }
  return { host: text.slice(0, i).replace(/^\[|\]$/g, ''), port };
}

/** The server's configuration: the Corefile when given and present, then flags over it. */
export function dnsConfigOf(f: DnsMainFlags, log: (l: string) => void): DnsServeConfig {
  let cfg = DEFAULT_SERVE_CONFIG;
  if (f.conf) {
    if (existsSync(f.conf)) cfg = parseCorefile(readFileSync(f.conf, 'utf8'));
    else log(`[WARNING] ${f.conf} not found: using the kubernetes plugin's defaults`);
  }
  if (f.pods !== undefined && !['disabled', 'insecure', 'verified'].includes(f.pods)) {
    throw kdpError('KDP_CONFIG', `kdp-dns: --pods: "${f.pods}" is not disabled, insecure or verified`);
  }
  if (f.ttl !== undefined && f.ttl > 3600) throw kdpError('KDP_CONFIG', 'kdp-dns: --ttl: at most 3600');
  return {
    ...cfg,
    ...(f.port !== undefined ? { port: f.port } : {}),
    ...(f.zone ? { zone: f.zone.toLowerCase().replace(/\.$/, '') } : {}),
    ...(f.ttl !== undefined ? { ttl: f.ttl } : {}),
    ...(f.pods ? { pods: f.pods as PodMode } : {}),
    ...(f.resolvConf ? { forward: { resolvConf: f.resolvConf, upstreams: [],
      maxConcurrent: cfg.forward?.maxConcurrent ?? 1000 } } : {}),
    health: endpoint(f.health, cfg.health, 'health'),
    ready: endpoint(f.ready, cfg.ready, 'ready'),
    metrics: endpoint(f.metrics, cfg.metrics, 'metrics'),
  };
}

/** Starts the server from flags and environment (the caller stops it). */
export async function startDnsFromFlags(f: DnsMainFlags, env: Readonly<Record<string, string | undefined>>,
  log: (l: string) => void): Promise<RunningDns> {
  const config = dnsConfigOf(f, log);
  const clientOpts = f.kubeconfig ? loadKubeconfig(f.kubeconfig)
    : { ...inClusterConfig(env) };
  const client = buildHttpClient({ ...clientOpts, userAgent: 'kdp-dns/0.1.0' });
  const host = f.listen ?? (f.kubeconfig ? '127.0.0.1' : '');
  const running = await startDns({ client, config, host: host === '::' ? '' : host, log });
  return { ...running, close: async () => { await running.close(); client.close(); } };
}

/** The program: runs until SIGTERM/SIGINT. Exit 0, 1 on a failure to start, 2 on bad flags. */
export async function dnsMain(argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  const log = (l: string) => void process.stdout.write(`${l}\n`);
  let running: RunningDns;
  try {
    running = await startDnsFromFlags(parseDnsArgs(argv), env, log);
  } catch (e) {
    process.stderr.write(`kdp-dns: ${(e as Error).message}\n`);
    return isKdpError(e, 'KDP_CONFIG') ? 2 : 1;
  }
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  log('[INFO] SIGTERM: shutting down');
  await running.close();
  return 0;
}
