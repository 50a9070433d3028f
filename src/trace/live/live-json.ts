// A live trace as data: the `live` object of `kdp trace --live -o json`, and the whole answer
// (the simulated trace's JSON with `live` beside it) from the words a user typed, which the web
// UI's live toggle asks for. The CLI and the UI print the same JSON from the same code.

import type { ClusterInfo } from '../../cluster/cluster-file.js';
import type { DataDirPaths } from '../../cluster/data-dir.js';
import type { Client } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import { clusterTraceJson, resolveClusterTrace } from '../cluster-json.js';
import type { TraceProtocol } from '../packet.js';
import { assertLiveCapable, buildLiveCluster } from './live-trace-cluster.js';
import { liveTrace, type LiveTrace } from './live-trace.js';

/** The `live` object of `-o json`. */
export function liveJson(l: LiveTrace): Record<string, unknown> {
  const o = l.observed;
  const b = l.comparison.branch;
  return {
    dir: l.dir,
    sport: l.sport,
    probe: l.probe,
    observed: {
      reached: o.reached, destination: o.destination, sourceSeen: o.sourceSeen, verdict: o.verdict,
      hops: o.hops.map(({ forwardPacket: _f, arrived: _a, ...h }) => h),
      kernel: o.kernel,
    },
    simulatedBranch: b ? {
      destination: b.destination, reached: b.reached, sourceSeen: b.sourceSeen, verdict: b.verdict,
    } : null,
    rules: l.comparison.rules,
    fidelity: l.comparison.bugs,
    agrees: l.comparison.bugs.length === 0,
  };
}

export interface LiveTraceRequest {
  readonly paths: DataDirPaths;
  readonly info: ClusterInfo;
  readonly client: Client;
  readonly src: string;
  readonly dst: string;
  readonly proto: TraceProtocol;
  readonly sport?: number;
  readonly timeoutMs?: number;
  /** Who asks, in the messages of refusals (`kdp trace`, `the web UI's live trace`). */
  readonly what: string;
}

// Captures and kernel tracing switched on in the same namespaces by two traces at once would
// see each other's packets: one live trace at a time per process.
let queue: Promise<unknown> = Promise.resolve();

/** Simulates SRC → DST, sends the probe for real and compares; the simulated trace's JSON with
 *  `live` beside it. Refuses a virtual cluster, a non-root process and sctp. */
export function liveClusterTraceJson(r: LiveTraceRequest): Promise<{ json: Record<string, unknown>; trace: LiveTrace }> {
  assertLiveCapable(r.what, r.info, r.paths);
  if (r.proto === 'sctp') throw kdpError('KDP_CONFIG', `${r.what}: live probes are tcp, udp or icmp, not sctp`);
  const run = async () => {
    const { topo, src, dst } = await resolveClusterTrace(r.client, r.paths.root, r.info.proxyMode, r.src, r.dst);
    const cluster = await buildLiveCluster({ paths: r.paths, info: r.info, client: r.client, topo });
    const trace = await liveTrace(cluster, { src, dst, proto: r.proto as 'tcp' | 'udp' | 'icmp',
      sport: r.sport, timeoutMs: r.timeoutMs });
    return { json: { ...clusterTraceJson(trace.simulated), live: liveJson(trace) }, trace };
  };
  const result = queue.then(run, run);
  queue = result.catch(() => undefined);
  return result;
}
