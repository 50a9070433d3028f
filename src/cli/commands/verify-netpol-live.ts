// `kdp verify --netpol --live` on a netns cluster: the wiring of src/netpol/live-matrix.ts to
// the kernel. One long-lived prober per source pod, started in the pod's network namespace;
// targets are pod IPs, or (`--via-service`) the ClusterIP of a Service that leads only to that
// pod, as upstream's e2e probes `s-<ns>-<pod>`; the tracer's answer comes from the tables each
// node's policy controller last applied. Before probing, each node's applied table must equal
// what the current objects compile to (the controller is in step), else the probes would
// measure a moment that is not the one computed.
// A session (`openNetpolLive`) keeps its probers between runs, so a suite checking many policy
// sets on one cluster starts one prober per pod once, not once per check.

import type { Pod, Service } from '../../api/types.js';
import { matchesSelectorMap } from '../../api/selectors.js';
import type { ClusterInfo } from '../../cluster/cluster-file.js';
import type { DataDirPaths } from '../../cluster/data-dir.js';
import type { Client, KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import { kernelProtocols } from '../../host/kernel-protocols.js';
import { podNetnsName } from '../../kubelet/runtime-netns.js';
import { buildModel } from '../../netpol/model.js';
import { nodeIPsOf } from '../../netpol/objects.js';
import { compileNetpolNftables } from '../../netpol/nftables.js';
import { readNetpolTable } from '../../netpol/table-file.js';
import type { NetworkPolicy } from '../../netpol/types.js';
import type { NetpolTable } from '../../netpol/report.js';
import {
  probeTables, type CellProbe, type LiveMatrixResult, type LiveProbeTarget,
} from '../../netpol/live-matrix.js';
import { rulesDir } from '../../proxy/history.js';
import { loadTopology, traceResolved } from '../../trace/cluster.js';
import { assertLiveCapable, buildLiveCluster } from '../../trace/live/live-trace-cluster.js';
import { startProber, type Prober } from '../../trace/live/prober.js';
import type { CliIO } from '../command.js';

export interface NetpolLiveOptions extends NetpolLiveRun {
  readonly paths: DataDirPaths;
  readonly info: ClusterInfo;
  readonly client: Client;
  readonly io: CliIO;
}

/** One check: the objects it was computed from, and the tables to probe. */
export interface NetpolLiveRun {
  readonly objs: readonly KubeObject[];
  readonly tables: readonly NetpolTable[];
  readonly viaService: boolean;
  readonly timeoutMs: number;
  /** Second try of a blocked cell computed allowed (default 2 × timeoutMs). */
  readonly retryTimeoutMs?: number;
  readonly parallel: number;
  /** How long to wait for the nodes' tables to be in step with the objects (default 10 s). */
  readonly syncTimeoutMs?: number;
}

export interface NetpolLiveSession {
  run(r: NetpolLiveRun): Promise<LiveMatrixResult>;
  close(): Promise<void>;
}

const key = (o: { metadata?: { namespace?: string; name?: string } }): string =>
  `${o.metadata?.namespace ?? 'default'}/${o.metadata?.name ?? ''}`;

/** Why SCTP cells are not probed on this machine. */
export function sctpSkipReason(protocols: ReadonlySet<string> = kernelProtocols()): string {
  return protocols.has('SCTP')
    ? 'not probed: the live prober sends TCP and UDP only'
    : 'not probed: this kernel has no SCTP (not in /proc/net/protocols), so no pod can serve it';
}

export async function runNetpolLive(o: NetpolLiveOptions): Promise<LiveMatrixResult> {
  const s = await openNetpolLive(o);
  try {
    return await s.run(o);
  } finally {
    await s.close();
  }
}

/**
 * Opens a session on a running netns cluster: probers start lazily, one per source pod, and
 * live until close(). Pods must keep their UIDs (a pod re-created needs a new session).
 */
export async function openNetpolLive(o: { readonly paths: DataDirPaths; readonly info: ClusterInfo;
  readonly client: Client; readonly io: Pick<CliIO, 'err' | 'isTTY'> }): Promise<NetpolLiveSession> {
  assertLiveCapable('kdp verify --netpol', o.info, o.paths);
  const probers = new Map<string, Promise<Prober>>();
  let prefix: string | undefined;
  const proberOf = (f: string, uid: string | undefined): Promise<Prober> => {
    let p = probers.get(f);
    if (!p) {
      if (!uid) throw kdpError('KDP_TRACE', `pod ${f} has no UID: cannot find its network namespace`);
      p = startProber(podNetnsName(prefix!, uid), { name: 'kdp-netpol' });
      probers.set(f, p);
    }
    return p;
  };
  return {
    async run(r) {
      const pods = r.objs.filter((x) => x.kind === 'Pod') as unknown as Pod[];
      await waitTablesInStep(o.paths, r.objs, pods, r.syncTimeoutMs ?? 10_000);
      const byKey = new Map(pods.map((p) => [key(p), p]));
      const services = r.viaService ? (await o.client.list<Service>(
        { group: '', version: 'v1', resource: 'services' })).items : [];
      const topo = await loadTopology(o.client, o.paths.root, o.info.proxyMode);
      prefix ??= (await buildLiveCluster({ ...o, topo })).prefix;
      const froms = [...new Set(r.tables.flatMap((t) => (t.protocol === 'SCTP' ? [] : t.pods)))];
      const ready = new Map<string, Prober>();
      await Promise.all(froms.map(async (f) => { ready.set(f, await proberOf(f, byKey.get(f)?.metadata.uid)); }));
      return probeTables(r.tables, {
        timeoutMs: r.timeoutMs,
        ...(r.retryTimeoutMs ? { retryTimeoutMs: r.retryTimeoutMs } : {}),
        parallel: r.parallel,
        sctpSkipped: sctpSkipReason(),
        target: (to, port, protocol) => targetOf(byKey.get(to), services, pods, port, protocol),
        async probe(from, t, protocol, timeoutMs): Promise<CellProbe> {
          const res = await ready.get(from)!.probe({ protocol, destination: t.ip, port: t.port, timeoutMs });
          return { outcome: res.outcome, ...(res.responder ? { responder: res.responder } : {}),
            ...(res.error ? { error: res.error } : {}) };
        },
        traced(from, t, protocol) {
          const src = topo.pods.find((p) => p.name === from && p.ip.includes(':') === t.ip.includes(':'));
          if (!src) return false;
          const tr = traceResolved(topo, { ip: src.ip, entry: { kind: 'pod', pod: src.name, node: src.node },
            label: `pod ${from}` }, { ip: t.ip, port: t.port, label: t.via }, protocol, undefined, false);
          return tr.result.verdict === 'ACCEPT';
        },
        onProbe: (i, n) => { if (o.io.isTTY) o.io.err(`live probe ${i}/${n}\x1b[K\r`); },
      });
    },
    async close() {
      const all = await Promise.allSettled(probers.values());
      probers.clear();
      await Promise.all(all.map((p) => (p.status === 'fulfilled' ? p.value.close() : undefined)));
    },
  };
}

/** The pod's own IP, or with `services` the ClusterIP of a Service selecting only this pod. */
function targetOf(pod: Pod | undefined, services: readonly Service[], pods: readonly Pod[], port: number,
  protocol: 'TCP' | 'UDP'): LiveProbeTarget | undefined {
  const ip = pod?.status?.podIP;
  if (!pod || !ip) return undefined;
  const ns = pod.metadata.namespace ?? 'default';
  for (const s of services) {
    const sel = s.spec?.selector;
    const cip = s.spec?.clusterIP;
    if ((s.metadata.namespace ?? 'default') !== ns || !sel || !cip || cip === 'None') continue;
    const chosen = pods.filter((p) => (p.metadata.namespace ?? 'default') === ns && p.status?.podIP
      && matchesSelectorMap(sel, p.metadata.labels ?? {}));
    if (chosen.length !== 1 || chosen[0] !== pod) continue;
    const sp = (s.spec?.ports ?? []).find((x) => (x.protocol ?? 'TCP') === protocol
      && targetPortOf(pod, x.targetPort ?? x.port, protocol) === port);
    if (sp) return { ip: cip, port: sp.port, via: `service ${ns}/${s.metadata.name}` };
  }
  return { ip, port, via: 'pod' };
}

function targetPortOf(pod: Pod, tp: number | string, protocol: string): number | undefined {
  if (typeof tp === 'number') return tp;
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) if (p.name === tp && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  }
  return undefined;
}

/**
 * Waits until every node's applied table is what its controller compiles from `objs` (the node
 * agents write each table they apply to the data dir): a condition, checked every 20 ms, not a
 * fixed sleep.
 */
export async function waitTablesInStep(paths: DataDirPaths, objs: readonly KubeObject[],
  pods: readonly Pod[], timeoutMs: number): Promise<void> {
  const live = pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  const model = buildModel({
    pods: live,
    namespaces: objs.filter((x) => x.kind === 'Namespace') as never,
    policies: objs.filter((x) => x.kind === 'NetworkPolicy') as unknown as NetworkPolicy[],
    nodeIPs: nodeIPsOf(objs.filter((x) => x.kind === 'Node')),
  });
  const nodes = objs.filter((x) => x.kind === 'Node').map((n) => n.metadata?.name ?? '');
  const want = new Map(nodes.map((n) => [n, compileNetpolNftables(model, { node: n })]));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const behind = nodes.filter((n) => readNetpolTable(rulesDir(paths.root, n)) !== want.get(n));
    if (behind.length === 0) return;
    if (Date.now() > deadline) {
      throw kdpError('KDP_TRACE', `the NetworkPolicy tables of node(s) ${behind.join(', ')} are not ` +
        'in step with the objects (is the cluster running?); nothing was probed');
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
