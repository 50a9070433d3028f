// `kdp trace`: where does this packet go, and what is done to it on the way?

import { kdpError } from '../../errors.js';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { loadTopology, resolveDestination, resolveSource, traceResolved } from '../../trace/cluster.js';
import { parseHostPort, parseProtocol, type TraceProtocol } from '../../trace/packet.js';
import { traceOffline, type TraceMode } from '../../trace/offline.js';
import type { TraceResult } from '../../trace/result.js';
import type { CliIO, Command } from '../command.js';
import { readInput } from '../read-input.js';
import { parseMode } from './rules-compile.js';
import { renderTrace } from '../render-trace.js';
import { DATA_DIR_FLAG } from './up.js';

export const traceCommand: Command = {
  name: 'trace',
  summary: 'trace a packet hop by hop through routes and the compiled rules',
  args: 'SRC DST[:PORT]',
  flags: [
    { name: 'rules', type: 'string', help: 'trace this rule dump instead of a cluster (iptables-save, nft list ruleset / -j, kdp rules compile output; - for stdin)' },
    { name: 'mode', type: 'string', help: 'iptables | nftables | ipvs (format of --rules)' },
    { name: 'node-ip', type: 'strings', help: 'with --rules: the node\'s local addresses (repeatable)' },
    { name: 'pod-cidr', type: 'strings', help: 'with --rules: pod CIDRs of this node' },
    { name: 'proto', type: 'string', default: 'tcp', help: 'tcp | udp | sctp | icmp' },
    { name: 'sport', type: 'number', help: 'source port (default 40000)' },
    { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' },
    DATA_DIR_FLAG,
  ],
  async run(args, io) {
    if (args.positionals.length !== 2) throw kdpError('KDP_TRACE', 'usage: kdp trace SRC DST[:PORT]');
    const [srcText, dstText] = args.positionals as [string, string];
    const proto = parseProtocol(args.flags.proto as string);
    if (!args.flags.rules) return traceCluster(args.flags, srcText, dstText, proto, io);
    const mode = parseMode(args.flags.mode) ?? 'iptables';
    const src = parseHostPort(srcText, 'SRC');
    const dst = parseHostPort(dstText, 'DST');
    const result = traceOffline({
      rules: await readInput(args.flags.rules as string, '--rules'),
      mode: mode as TraceMode,
      nodeIPs: (args.flags['node-ip'] as string[] | undefined) ?? [],
      podCIDRs: args.flags['pod-cidr'] as string[] | undefined,
      src: src.ip, dst: dst.ip, dport: dst.port, proto,
      sport: args.flags.sport as number | undefined,
    });
    io.out(args.flags.output === 'json' ? `${JSON.stringify(traceJson(result), null, 2)}\n` : renderTrace(result, io.isTTY));
    return result.verdict === 'ACCEPT' ? 0 : 1;
  },
};

async function traceCluster(
  flags: Record<string, unknown>, srcText: string, dstText: string, proto: TraceProtocol, io: CliIO,
): Promise<number> {
  const paths = dataDirPaths(resolveDataDir(flags['data-dir'] as string | undefined, io.env));
  const info = readClusterInfo(paths);
  const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
  const topo = await loadTopology(client, paths.root, info.proxyMode);
  const dst = await resolveDestination(client, topo, dstText);
  const src = resolveSource(topo, srcText, dst.node);
  const t = traceResolved(topo, src, dst, proto, flags.sport as number | undefined);
  if (flags.output === 'json') {
    io.out(`${JSON.stringify({ source: src.label, target: dst.label, ...traceJson(t.result),
      ...(t.natFree === undefined ? {} : { natFree: t.natFree }) }, null, 2)}\n`);
  } else {
    io.out(`${src.label} → ${dst.label}\n${renderTrace(t.result, io.isTTY)}`);
    if (t.natFree !== undefined) io.out(`NAT-free: ${t.natFree ? 'yes' : 'no'}\n`);
  }
  return t.result.verdict === 'ACCEPT' ? 0 : 1;
}

export function traceJson(r: TraceResult): Record<string, unknown> {
  return {
    packet: r.packet,
    verdict: r.verdict,
    destinations: r.destinations.map((d) => ({
      destination: d.destination, probability: round(d.probability), masquerade: d.masquerade,
      sourceSeen: d.sourceSeen, verdict: d.verdict, reached: d.reached, hops: d.hops,
    })),
    masquerade: r.masquerade,
    hops: r.hops,
  };
}

function round(p: number): number {
  return Math.round(p * 1e10) / 1e10;
}
