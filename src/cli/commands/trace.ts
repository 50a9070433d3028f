// `kdp trace`: where does this packet go, and what is done to it on the way?

import { kdpError } from '../../errors.js';
import { readClusterInfo, type ClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir, type DataDirPaths } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import type { Client } from '../../client/types.js';
import {
  traceResolved, type ResolvedDestination, type ResolvedSource,
} from '../../trace/cluster.js';
import { clusterTraceJson, resolveClusterTrace, traceJson } from '../../trace/cluster-json.js';
import { liveTrace } from '../../trace/live/live-trace.js';
import { assertLiveCapable, buildLiveCluster } from '../../trace/live/live-trace-cluster.js';
import type { Topology } from '../../trace/topology.js';
import { parseHostPort, parseProtocol, type TraceProtocol } from '../../trace/packet.js';
import { checkDump, traceOffline, type TraceMode } from '../../trace/offline.js';
import type { TraceResult } from '../../trace/result.js';
import type { CliIO, Command } from '../command.js';
import { readInput } from '../read-input.js';
import { parseMode } from './rules-compile.js';
import { DEFAULT_PROXY_MODE } from '../../proxy/registry.js';
import { liveJson, renderLive, renderTrace } from '../render-trace.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

/** Exit statuses: `exits` and `errorStatus` (2: any error, so 1 is always a verdict). */
export const traceCommand: Command = {
  name: 'trace',
  errorStatus: 2,
  exits: [
    { code: 0, meaning: 'the packet is delivered (with --live: and the kernel agrees)' },
    { code: 1, meaning: 'the packet is dropped or rejected (with --live: and the kernel agrees)' },
    { code: 3, meaning: 'with --live: the kernel disagrees with the simulation (a fidelity bug)' },
  ],
  summary: 'trace a packet hop by hop through routes and the compiled rules (DST: an IP, a pod, a node, svc/NS/NAME, or a DNS name such as web.default)',
  args: 'SRC DST[:PORT]',
  flags: [
    { name: 'rules', type: 'string', help: 'trace this rule dump instead of a cluster (iptables-save, nft list ruleset / -j, kdp rules compile output; - for stdin)' },
    { name: 'mode', type: 'string', help: 'iptables | nftables | ipvs (format of --rules)' },
    { name: 'node-ip', type: 'strings', help: 'with --rules: the node\'s local addresses (repeatable)' },
    { name: 'pod-cidr', type: 'strings', help: 'with --rules: pod CIDRs of this node' },
    { name: 'proto', type: 'string', default: 'tcp', help: 'tcp | udp | sctp | icmp' },
    { name: 'sport', type: 'number', help: 'source port (default 40000)' },
    {
      name: 'live', type: 'boolean',
      help: 'netns cluster, root: also send the packet for real, capture it (pcap), trace it in the ' +
        'kernel, and compare',
    },
    { name: 'timeout', type: 'number', default: 1500, help: 'with --live: how long to wait for an answer (ms)' },
    { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' },
    DATA_DIR_FLAG,
  ],
  async run(args, io) {
    if (args.positionals.length !== 2) throw kdpError('KDP_CONFIG', 'usage: kdp trace SRC DST[:PORT]');
    const [srcText, dstText] = args.positionals as [string, string];
    const proto = parseProtocol(args.flags.proto as string);
    if (args.flags.live && args.flags.rules) {
      throw kdpError('KDP_CONFIG', '--live traces a running cluster, not --rules');
    }
    if (!args.flags.rules) return traceCluster(args.flags, srcText, dstText, proto, io);
    const mode = parseMode(args.flags.mode) ?? DEFAULT_PROXY_MODE;
    const src = parseHostPort(srcText, 'SRC');
    const dst = parseHostPort(dstText, 'DST');
    const rulesFile = args.flags.rules as string;
    const rules = await readInput(rulesFile, '--rules');
    checkDump(mode as TraceMode, rules, rulesFile === '-' ? '(stdin)' : rulesFile);
    const result = traceOffline({
      rules,
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
  if (flags.live) assertLiveCapable('kdp trace', info, paths);
  const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
  // A name resolves through the search list of the source pod's namespace.
  const { topo, src, dst } = await resolveClusterTrace(client, paths.root, info.proxyMode, srcText, dstText);
  if (flags.live) return traceLive({ paths, info, client, topo, src, dst, proto, flags, io });
  const t = traceResolved(topo, src, dst, proto, flags.sport as number | undefined);
  if (flags.output === 'json') {
    io.out(`${JSON.stringify(clusterTraceJson(t), null, 2)}\n`);
  } else {
    io.out(`${t.source.label} → ${t.destination.label}\n${renderTrace(t.result, io.isTTY)}`);
    if (t.natFree !== undefined) io.out(`NAT-free: ${t.natFree ? 'yes' : 'no'}\n`);
  }
  return t.result.verdict === 'ACCEPT' ? 0 : 1;
}

/** Exit 0 when the kernel agrees with the simulation and the packet was delivered; 1 when it
 *  was refused but both agree; 3 on any fidelity bug. */
async function traceLive(o: {
  paths: DataDirPaths; info: ClusterInfo; client: Client; topo: Topology; src: ResolvedSource;
  dst: ResolvedDestination; proto: TraceProtocol; flags: Record<string, unknown>; io: CliIO;
}): Promise<number> {
  if (o.proto === 'sctp') {
    throw kdpError('KDP_CONFIG', '--live sends tcp, udp or icmp probes, not sctp');
  }
  const cluster = await buildLiveCluster(o);
  const l = await liveTrace(cluster, {
    src: o.src, dst: o.dst, proto: o.proto, sport: o.flags.sport as number | undefined,
    timeoutMs: o.flags.timeout as number,
  });
  if (o.flags.output === 'json') {
    const json = { ...clusterTraceJson(l.simulated), live: liveJson(l) };
    o.io.out(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    o.io.out(`${o.src.label} → ${o.dst.label} (live, ${o.info.proxyMode} mode)\n` +
      `${renderTrace(l.simulated.result, o.io.isTTY)}${renderLive(l, o.io.isTTY)}`);
  }
  if (l.comparison.bugs.length) return 3;
  return l.simulated.result.verdict === 'ACCEPT' ? 0 : 1;
}

export { traceJson };
