// `kdp trace --live`: the simulated trace, then the same packet for real. Captures run on every
// interface a simulated branch crosses and the kernel's own tracing on every node on the way; the
// probe leaves the source's namespace with the simulated 5-tuple; what the kernel did is set
// beside the simulation and every disagreement is reported as a fidelity bug.

import { mkdirSync } from 'node:fs';
import { ensurePrivateDirSync, PRIVATE_DIR_MODE } from '../../util/private-files.js';
import { join } from 'node:path';
import { kdpError } from '../../errors.js';
import type { HostExec } from '../../host/exec.js';
import { kernelRulesOf, type KernelRules, type ProxyMode } from '../../proxy/registry.js';
import type { ClusterTrace, ResolvedDestination, ResolvedSource } from '../cluster.js';
import { traceResolved } from '../cluster.js';
import { endpointString } from '../packet.js';
import type { TraceDestination } from '../result.js';
import type { Topology } from '../topology.js';
import { startCaptures, type CapturePoint, type CaptureResult } from './capture.js';
import { startNftTrace, type KernelTraceSession, type TraceMatch } from './kernel-trace-nft.js';
import { startXtTrace } from './kernel-trace-xt.js';
import {
  nodeNetns, pathPoints, requiredLabels, senderNetns, uniquePoints,
} from './live-trace-path.js';
import { compareLive, type LiveComparison, type ObservedOutcome } from './observed-compare.js';
import { observedHops, observeOutcome, type KernelTrace, type ProbeTuple } from './observed.js';
import { startProber as defaultStartProber, type ProbeOutcome, type Prober } from './prober.js';

export interface LiveCluster {
  readonly exec: HostExec;
  /** `kdp-<id>`: the cluster's namespaces start with it. */
  readonly prefix: string;
  /** A mode with kernel commands (checked by assertLiveCluster). */
  readonly mode: ProxyMode;
  readonly topo: Topology;
  /** `ns/name` → pod UID (pod namespaces and host veths are named after it). */
  readonly podUids: ReadonlyMap<string, string>;
  /** `<data-dir>/traces`: each live trace keeps its files in a fresh folder below. */
  readonly tracesDir: string;
  readonly startProber?: (netns: string, opts?: { name?: string }) => Promise<Prober>;
}

export interface LiveRequest {
  readonly src: ResolvedSource;
  readonly dst: ResolvedDestination;
  readonly proto: 'tcp' | 'udp' | 'icmp';
  /** Source port of the probe (and of the simulation); random when unset. */
  readonly sport?: number;
  readonly timeoutMs?: number;
}

export interface LiveTrace {
  readonly simulated: ClusterTrace;
  readonly dir: string;
  readonly sport: number;
  readonly probe: ProbeOutcome;
  readonly observed: ObservedOutcome;
  readonly comparison: LiveComparison;
}

/** A fresh `<traces>/<timestamp>-<n>` folder (n counts up from 1 within one second). */
export function newTraceDir(tracesDir: string): string {
  ensurePrivateDirSync(tracesDir);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  for (let n = 1; ; n++) {
    const dir = join(tracesDir, `${stamp}-${n}`);
    try {
      mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
      return dir;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/** A random port in Linux's default ephemeral range (32768-60999), as a real client has. */
function randomSport(): number {
  return 33000 + Math.floor(Math.random() * 28000);
}

interface Running {
  readonly captures: Awaited<ReturnType<typeof startCaptures>>;
  readonly prober: Prober;
  readonly sessions: KernelTraceSession[];
}

export async function liveTrace(c: LiveCluster, req: LiveRequest): Promise<LiveTrace> {
  if (req.src.entry.kind === 'external') {
    throw kdpError('KDP_TRACE',
      '--live: the source must be a pod or a node (an outside client has no namespace)');
  }
  const sport = req.sport ?? randomSport();
  const simulated = traceResolved(c.topo, req.src, req.dst, req.proto, sport);
  const dir = newTraceDir(c.tracesDir);
  const branchPoints = new Map<TraceDestination, CapturePoint[]>();
  for (const b of simulated.result.destinations) branchPoints.set(b, pathPoints(c, req.src, b));
  const points = uniquePoints([...branchPoints.values()].flat());
  const nodes = [...new Set(points.flatMap((p) => (p.node === undefined ? [] : [p.node])))];
  const dport = req.proto === 'icmp' ? 0 : req.dst.port ?? 0;
  const servers = new Set([endpointString(req.dst.ip, dport || undefined),
    ...simulated.result.destinations.map((d) => d.destination)]);
  const tuple: ProbeTuple = { protocol: req.proto, src: req.src.ip, sport, dst: req.dst.ip, dport, servers };
  const r = await startAll(c, req, tuple, points, nodes, dir);
  try {
    let probe: ProbeOutcome | undefined;
    let kernel: KernelTrace[] = [];
    let captured: CaptureResult[] = [];
    try {
      probe = await r.prober.probe({
        protocol: req.proto, destination: req.dst.ip, timeoutMs: req.timeoutMs ?? 1500,
        ...(req.proto === 'icmp' ? {} : { port: dport, sport }),
      });
      // Late packets (the answer's last segments, ICMP errors) still reach the captures.
      await new Promise((res) => setTimeout(res, 150));
    } finally {
      [kernel, captured] = await Promise.all([
        Promise.all(r.sessions.map((s) => s.stop())), r.captures.stop(),
      ]);
    }
    const hops = observedHops(captured, tuple);
    const observed = observeOutcome(c.topo, hops, kernel, probe, tuple.dst);
    const required = (b: TraceDestination) => requiredLabels(branchPoints.get(b) ?? []);
    const comparison = compareLive(simulated.result, observed, required);
    return { simulated, dir, sport, probe, observed, comparison };
  } finally {
    await r.prober.close();
  }
}

/** Captures, kernel traces and the prober (a Node process) all take a while to start: at once.
 *  When one fails, the others are stopped again. */
async function startAll(
  c: LiveCluster, req: LiveRequest, t: ProbeTuple, points: readonly CapturePoint[],
  nodes: readonly string[], dir: string,
): Promise<Running> {
  const started = await Promise.allSettled([
    startCaptures(points, dir, {
      protocol: t.protocol, sport: t.sport, dst: t.dst, dport: t.dport, servers: [...t.servers ?? []],
    }),
    (c.startProber ?? defaultStartProber)(senderNetns(c, req.src), { name: 'kdp-trace' }),
    startKernelTraces(c, nodes, { protocol: t.protocol, sport: t.sport, src: t.src }, dir),
  ] as const);
  const [cap, prober, kern] = started;
  if (cap.status === 'fulfilled' && prober.status === 'fulfilled' && kern.status === 'fulfilled') {
    return { captures: cap.value, prober: prober.value, sessions: kern.value };
  }
  await Promise.all([
    cap.status === 'fulfilled' ? cap.value.stop() : undefined,
    prober.status === 'fulfilled' ? prober.value.close() : undefined,
    kern.status === 'fulfilled' ? Promise.all(kern.value.map((k) => k.stop())) : undefined,
  ]);
  throw (started.find((x) => x.status === 'rejected') as PromiseRejectedResult).reason;
}

/** The kernel's trace facility of each mode (its registry entry's `kernel.liveTrace`). */
const KERNEL_TRACES: Record<KernelRules['liveTrace'], typeof startNftTrace> = {
  nft: startNftTrace, xtables: startXtTrace,
};

async function startKernelTraces(
  c: LiveCluster, nodes: readonly string[], m: TraceMatch, dir: string,
): Promise<KernelTraceSession[]> {
  const tool = kernelRulesOf(c.mode).liveTrace;
  const start = KERNEL_TRACES[tool];
  const started = await Promise.allSettled(nodes.map((name) => {
    const node = { name, netns: nodeNetns(c, name) };
    return start(c.exec, node, m, join(dir, `${node.netns}-${tool}-trace.txt`));
  }));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((r) =>
      (r.status === 'fulfilled' ? r.value.stop().catch(() => undefined) : undefined)));
    throw failed.reason;
  }
  return started.map((r) => (r as PromiseFulfilledResult<KernelTraceSession>).value);
}
