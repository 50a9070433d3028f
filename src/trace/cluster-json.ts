// The JSON of a cluster trace, as `kdp trace -o json` prints it and the web UI draws it, and
// the one way both get there from the words a user typed (SRC, DST[:PORT]).

import type { Client } from '../client/types.js';
import type { TraceMode } from './offline.js';
import type { TraceProtocol } from './packet.js';
import type { TraceResult } from './result.js';
import type { Topology } from './topology.js';
import { verdictLabel } from './world.js';
import {
  loadTopology, resolveDestination, resolveSource, traceResolved, type ClusterTrace,
  type ResolvedDestination, type ResolvedSource,
} from './cluster.js';

export interface ResolvedClusterTrace {
  readonly topo: Topology;
  readonly src: ResolvedSource;
  readonly dst: ResolvedDestination;
}

/** Reads the cluster (nodes, pods, each node's kept rules in `dataDir`) and resolves SRC and
 *  DST; a DNS name in DST resolves through the search list of the source pod's namespace. */
export async function resolveClusterTrace(client: Client, dataDir: string, mode: TraceMode,
  srcText: string, dstText: string): Promise<ResolvedClusterTrace> {
  const topo = await loadTopology(client, dataDir, mode);
  const srcPod = topo.pods.find((p) => p.ip === srcText || p.name === srcText ||
    p.name === `default/${srcText}`);
  const dst = await resolveDestination(client, topo, dstText, srcPod?.name.split('/')[0] ?? 'default');
  const src = resolveSource(topo, srcText, dst.node, dst.ip);
  return { topo, src, dst };
}

/** `kdp trace SRC DST -o json` of a running cluster, as data. */
export async function traceClusterJson(client: Client, dataDir: string, mode: TraceMode,
  srcText: string, dstText: string, proto: TraceProtocol, sport?: number):
  Promise<{ json: Record<string, unknown>; trace: ClusterTrace }> {
  const r = await resolveClusterTrace(client, dataDir, mode, srcText, dstText);
  const trace = traceResolved(r.topo, r.src, r.dst, proto, sport);
  return { json: clusterTraceJson(trace), trace };
}

export function clusterTraceJson(t: ClusterTrace): Record<string, unknown> {
  return { source: t.source.label, target: t.destination.label,
    ...(t.destination.dns ? { dns: t.destination.dns } : {}), ...traceJson(t.result),
    ...(t.natFree === undefined ? {} : { natFree: t.natFree }) };
}

export function traceJson(r: TraceResult): Record<string, unknown> {
  return {
    packet: r.packet,
    // `DROP (policy ns/name)` when NetworkPolicy dropped it (world.ts verdictLabel).
    verdict: verdictLabel(r.verdict, r.dropBy),
    destinations: r.destinations.map((d) => ({
      destination: d.destination, probability: round(d.probability), masquerade: d.masquerade,
      sourceSeen: d.sourceSeen, verdict: verdictLabel(d.verdict, d.dropBy), reached: d.reached, hops: d.hops,
    })),
    masquerade: r.masquerade,
    hops: r.hops,
  };
}

function round(p: number): number {
  return Math.round(p * 1e10) / 1e10;
}
