// The policy controller of one node agent (the enforcing half of a CNI such as Calico's felix):
// it watches Pods, Namespaces and NetworkPolicies through the cluster's shared informers and
// keeps the node's `inet kdp-netpol` table equal to what compileNetpolNftables makes of them.
//
// Contract:
// - Any change schedules one recompile after `debounceMs` (a burst of changes is one apply).
//   Every pod counts (peer sets hold other nodes' pods' IPs); only the node's own pods get chains.
//   The compile is incremental (node-compiler.ts: only the sets, isolation and chains a change
//   can affect are recomputed) and the applier sends the kernel only the difference (delta.ts).
// - A text equal to the last one applied is not applied again.
// - Each apply is one atomic transaction (applier.ts); a refused apply keeps the previous table,
//   is reported through `onError`, and is retried after `retryMs`.
// - Pods that finished (Succeeded/Failed) are left out: their IPs may be handed out again.
// - `stop()` stops watching; the table stays in the kernel, as a CNI's rules outlive its agent.
// - `programPod(pod, ips)`: the runtime calls it after CNI ADD gave a pod its IPs and before
//   any of its containers start; it resolves once a table holding the pod at those IPs is
//   applied (rejects if that apply was refused), so a pod a policy isolates is isolated from its
//   first packet, not from when its IP reaches the API server. The IPs are kept until the
//   informer's copy of the pod carries IPs itself, or the pod is gone.

import type { Namespace, Pod } from '../api/types.js';
import type { InformerFactory } from '../client/informer.js';
import type { NetpolApplier } from './applier.js';
import { buildModel } from './model.js';
import { buildNodeCompiler } from './node-compiler.js';
import type { NetworkPolicy } from './types.js';

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' } as const;
const POLICIES = { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies' } as const;

export interface NetpolControllerDeps {
  readonly nodeName: string;
  /** The node's own IPs (traffic from them to its pods is always allowed). */
  readonly nodeIPs: readonly string[];
  readonly informers: InformerFactory;
  readonly applier: NetpolApplier;
  readonly debounceMs?: number;
  readonly retryMs?: number;
  readonly onError?: (err: unknown) => void;
  /** Called with each text the applier took (e.g. to keep it in the data dir). */
  readonly onApplied?: (text: string) => void;
}

export interface NetpolController {
  start(): Promise<void>;
  stop(): void;
  /** Resolves once every change seen before the call is compiled and applied (or refused). */
  synced(): Promise<void>;
  /** Successful applies so far. */
  readonly applyCount: number;
  /** The text last compiled (applied or not). */
  compiled(): string | undefined;
  /** Programs a pod the runtime just gave `ips`, ahead of the API server knowing them. */
  programPod(pod: Pod, ips: readonly string[]): Promise<void>;
}

export function buildNetpolController(d: NetpolControllerDeps): NetpolController {
  const debounceMs = d.debounceMs ?? 50;
  const retryMs = d.retryMs ?? 1000;
  const pods = d.informers.informerFor<Pod>(PODS);
  const namespaces = d.informers.informerFor<Namespace>(NAMESPACES);
  const policies = d.informers.informerFor<NetworkPolicy & Pod>(POLICIES);
  const unsubscribe: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let busy = false;
  /** A change arrived since the current sync read the caches. */
  let dirty = false;
  let applyCount = 0;
  let lastCompiled: string | undefined;
  let waiters: Array<(err?: unknown) => void> = [];
  /** Pods programmed ahead of the API (programPod), by UID, with the IPs the runtime gave. */
  const early = new Map<string, Pod>();
  const compiler = buildNodeCompiler(d.nodeName);

  /** The informer's pods, with early pods' IPs filled in (or added) until the cache has them. */
  const podsNow = (): Pod[] => {
    const out = pods.cache.list().map((p) => {
      const e = early.get(p.metadata.uid ?? '');
      if (!e) return p;
      if (p.status?.podIP) { early.delete(p.metadata.uid!); return p; }
      return { ...p, status: { ...p.status, podIP: e.status!.podIP, podIPs: e.status!.podIPs } } as Pod;
    });
    const cached = new Set(out.map((p) => p.metadata.uid));
    for (const [uid, e] of early) if (!cached.has(uid)) out.push(e);
    return out;
  };

  const compile = (): string => {
    const live = podsNow().filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    const model = buildModel({
      pods: live, namespaces: namespaces.cache.list(),
      policies: policies.cache.list() as unknown as NetworkPolicy[],
      nodeIPs: new Map([[d.nodeName, d.nodeIPs]]),
    });
    return compiler.compile(model);
  };

  const schedule = (ms: number): void => {
    if (!running || timer) return;
    timer = setTimeout(() => { timer = undefined; void sync(); }, ms);
    timer.unref?.();
  };
  const changed = (): void => {
    dirty = true;
    if (!busy) schedule(debounceMs);
  };

  async function sync(): Promise<void> {
    if (!running || busy) return;
    busy = true;
    dirty = false;
    const done = waiters;
    waiters = [];
    let failed = false;
    let error: unknown;
    try {
      const text = compile();
      lastCompiled = text;
      if (text !== d.applier.current()) {
        await d.applier.apply(text);
        applyCount++;
        try { d.onApplied?.(text); } catch (e) { d.onError?.(e); }
      }
    } catch (e) {
      failed = true;
      error = e;
      d.onError?.(e);
    } finally {
      busy = false;
    }
    for (const w of done) w(error);
    if (dirty) schedule(debounceMs);
    else if (failed) { dirty = true; schedule(retryMs); }
  }

  return {
    get applyCount() { return applyCount; },
    compiled: () => lastCompiled,
    async start() {
      if (running) return;
      running = true;
      for (const inf of [pods, namespaces, policies] as const) {
        unsubscribe.push((inf as typeof pods).addEventHandler({
          onAdd: changed, onUpdate: changed, onDelete: changed,
        }));
      }
      // A pod gone before the informer ever saw its IPs takes its early entry with it.
      unsubscribe.push(pods.addEventHandler({ onDelete: (p) => { early.delete(p.metadata.uid ?? ''); } }));
      await Promise.all([pods.waitForSync(), namespaces.waitForSync(), policies.waitForSync()]);
      clearTimeout(timer);
      timer = undefined;
      await sync();
    },
    stop() {
      running = false;
      clearTimeout(timer);
      timer = undefined;
      for (const u of unsubscribe.splice(0)) u();
      for (const w of waiters.splice(0)) w();
      early.clear();
    },
    synced() {
      if (!running) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiters.push(() => resolve());
        dirty = true;
        if (!busy) schedule(0);
      });
    },
    programPod(pod, ips) {
      const uid = pod.metadata.uid;
      if (!running || !uid || ips.length === 0) return Promise.resolve();
      early.set(uid, { ...pod, spec: { ...pod.spec, nodeName: pod.spec?.nodeName ?? d.nodeName },
        status: { ...pod.status, podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) } } as Pod);
      return new Promise<void>((resolve, reject) => {
        waiters.push((err) => (err === undefined ? resolve() : reject(err)));
        dirty = true;
        if (!busy) { clearTimeout(timer); timer = undefined; schedule(0); }
      });
    },
  };
}
