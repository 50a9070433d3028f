// The node agent's kubelet: registers the Node, renews its Lease, posts node status, and runs
// the pods bound to it through a Runtime, publishing their status. Graceful deletion: a pod with
// a deletionTimestamp is stopped through the runtime's `stopPod` (SIGTERM, SIGKILL after the
// grace period) or, when the runtime has none (virtual), keeps running (endpoints show it
// terminating) for its grace period; then the kubelet releases its IP and deletes it with
// gracePeriodSeconds=0. `stop()` ends
// every loop (heartbeats stop, so the node lifecycle controller will mark the node unreachable);
// the runtime's sandboxes are left as they are, like a crashed kubelet's.

import type { Node, Pod, Taint } from '../api/types.js';
import { isKdpError, kdpError } from '../errors.js';
import { objectKey } from '../client/cache.js';
import type { Client } from '../client/types.js';
import { buildWorkQueue, runWorkers } from '../client/workqueue.js';
import { hostCapacity, VIRTUAL_NODE_CAPACITY } from './capacity.js';
import { buildEventRecorder } from '../client/events.js';
import { containerEvents, killingEvents, type ContainerEvent, type PodMarks } from './container-events.js';
import { buildLeaseHeartbeat } from './lease.js';
import { buildNodeObject, nodeConditions } from './node-status.js';
import { buildPodStatus } from './pod-status.js';
import { ephemeralContainerStatuses } from './ephemeral.js';
import type { Runtime } from './runtime.js';
import { buildOwnSources, type NodeAgentSources } from './sources.js';

export interface NodeAgentOptions {
  readonly nodeIP?: string;
  /** Every InternalIP, primary family first (dual stack: one per family); default [nodeIP]. */
  readonly nodeIPs?: readonly string[];
  readonly cpu?: string;
  readonly memory?: string;
  readonly maxPods?: number;
  readonly labels?: Record<string, string>;
  readonly taints?: Taint[];
  readonly kubeletVersion?: string;
  /** Where this kubelet serves its API (published in status.daemonEndpoints); default 10250. */
  readonly kubeletPort?: number;
  /** Multiplies every interval below. Default 1. */
  readonly timeScale?: number;
  readonly leaseRenewIntervalMs?: number;
  readonly leaseDurationSeconds?: number;
  readonly nodeStatusUpdateMs?: number;
  /** A status is posted at least this often even when nothing changed. Default 5 min. */
  readonly nodeStatusReportMs?: number;
  /**
   * Pod workers (syncs in flight at once; CNI ADD runs inside one). Default 32: upstream has a
   * worker per pod; too few, and a pod that turned ready waits behind others' network setup.
   */
  readonly workers?: number;
  /** Shared informers (in-process pools of nodes); default: the agent's own. */
  readonly sources?: NodeAgentSources;
  readonly now?: () => number;
  /** Record upstream's kubelet Events (node Starting/NodeReady…, container Pulled/Created/
   *  Started/Killing/BackOff). Default true; benchmarks turn them off. */
  readonly recordEvents?: boolean;
}

export interface NodeAgent {
  readonly nodeName: string;
  start(): Promise<void>;
  /** Stops heartbeats, status updates and pod handling. */
  stop(): Promise<void>;
  /** Container logs of a pod on this node (the API server's pods/log routes here). */
  logs(namespace: string, pod: string, container: string, previous?: boolean): string;
  /** The pod bound to this node with that name, as the kubelet knows it. */
  pod(namespace: string, name: string): Pod | undefined;
  /** The pods bound to this node (the kubelet API's /pods). */
  pods?(): readonly Pod[];
}

export interface NodeAgentDeps {
  readonly client: Client;
  readonly nodeName: string;
  readonly runtime: Runtime;
  readonly options?: NodeAgentOptions;
}

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

export function buildNodeAgent(deps: NodeAgentDeps): NodeAgent {
  const { client, nodeName, runtime } = deps;
  const o = deps.options ?? {};
  const scale = o.timeScale ?? 1;
  const now = o.now ?? Date.now;
  const nodeIPs = o.nodeIPs?.length ? o.nodeIPs : [o.nodeIP ?? '172.18.0.2'];
  const nodeIP = nodeIPs[0]!;
  const sources = o.sources ?? buildOwnSources(client, nodeName);
  const iso = () => new Date(now()).toISOString().replace(/\.\d+Z$/, 'Z');
  let node: Node | undefined;
  const uidToKey = new Map<string, string>();
  const terminating = new Map<string, NodeJS.Timeout | undefined>();
  const timers: NodeJS.Timeout[] = [];
  const recorder = buildEventRecorder(client, { component: 'kubelet', host: nodeName,
    enabled: o.recordEvents ?? true, now });
  const marks = new Map<string, PodMarks>();
  const podEvents = (pod: Pod, events: readonly ContainerEvent[]) => {
    const obj = { ...pod, apiVersion: 'v1', kind: 'Pod' };
    for (const e of events) recorder.event(obj, e.type, e.reason, e.message, e.fieldPath);
  };
  const unsubs: Array<() => void> = [];
  let queue = buildWorkQueue<string>({ baseDelayMs: 20, maxDelayMs: 10_000 * scale + 100 });
  let running = false;
  let lastReport = 0;
  const lease = buildLeaseHeartbeat(client, nodeName, () => node?.metadata.uid, now,
    o.leaseDurationSeconds ?? 40);

  async function register(): Promise<void> {
    // A runtime that reports nodeInfo runs on the real machine (netns): report its capacity.
    const capacity = runtime.nodeInfo ? hostCapacity() : VIRTUAL_NODE_CAPACITY;
    const obj = buildNodeObject({
      nodeName, nodeIP, nodeIPs, cpu: o.cpu ?? capacity.cpu, memory: o.memory ?? capacity.memory,
      pods: o.maxPods ?? 110,
      labels: o.labels, taints: o.taints, kubeletVersion: o.kubeletVersion ?? 'v1.33.0', kubeletPort: o.kubeletPort,
      ...(runtime.nodeInfo ? { nodeInfo: runtime.nodeInfo } : {}),
    }, iso());
    try {
      node = await client.create<Node>(NODES, obj);
    } catch (e) {
      if (!isKdpError(e, 'KDP_ALREADY_EXISTS')) throw e;
      node = await client.get<Node>(NODES, nodeName);
      await postStatus(true);
    }
    lastReport = now();
    // As upstream's kubelet on start; its node reference carries the node name as UID.
    const ref = { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, uid: nodeName } };
    recorder.event(ref, 'Normal', 'Starting', 'Starting kubelet.');
    for (const c of ['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID']) {
      recorder.event(ref, 'Normal', c, `Node ${nodeName} status is now: ${c}`);
    }
    recorder.event(ref, 'Normal', 'NodeAllocatableEnforced', 'Updated Node Allocatable limit across pods');
    recorder.event(ref, 'Normal', 'NodeReady', `Node ${nodeName} status is now: NodeReady`);
  }

  async function postStatus(force: boolean): Promise<void> {
    const cur = sources.nodes.get(nodeName) ?? node;
    const ready = cur?.status?.conditions?.find((c) => c.type === 'Ready');
    const reportEvery = (o.nodeStatusReportMs ?? 300_000) * scale;
    if (!force && ready?.status === 'True' && now() - lastReport < reportEvery) {
      return;
    }
    lastReport = now();
    // A strategic merge patch, as upstream's kubelet: conditions merge by type, so the ones other
    // components own (NetworkUnavailable, the route controller's) stay.
    node = await client.patch<Node>(NODES, nodeName, 'strategic', {
      status: { conditions: nodeConditions(iso(), cur?.status?.conditions),
        // A restarted kubelet may serve on another port (virtual nodes: any free loopback port).
        ...(o.kubeletPort ? { daemonEndpoints: { kubeletEndpoint: { Port: o.kubeletPort } } } : {}) },
    }, { subresource: 'status' });
  }

  function every(ms: number, fn: () => Promise<void>): void {
    const t = setInterval(() => { if (running) fn().catch(() => undefined); }, Math.max(1, ms));
    t.unref?.();
    timers.push(t);
  }

  const podCIDRs = () => {
    const n = sources.nodes.get(nodeName) ?? node;
    return n?.spec?.podCIDRs?.length ? n.spec.podCIDRs : n?.spec?.podCIDR ? [n.spec.podCIDR] : [];
  };

  async function syncPod(key: string): Promise<void> {
    const pod = sources.pods.get(key);
    if (!pod || pod.spec?.nodeName !== nodeName) return;
    const uid = pod.metadata.uid!;
    uidToKey.set(uid, key);
    if (pod.metadata.deletionTimestamp) { beginTermination(pod); return; }
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') { await runtime.killPod(uid); return; }
    let rt = runtime.podStatus(uid);
    if (!rt) {
      const cidrs = podCIDRs();
      if (!cidrs.length) return; // requeued when the node gets its podCIDR
      rt = await runtime.runPod(pod, { podCIDRs: cidrs });
    }
    await runtime.runEphemeral?.(pod);
    const seen = containerEvents(pod, marks.get(uid), rt);
    marks.set(uid, seen.marks);
    podEvents(pod, seen.events);
    const built = buildPodStatus(pod, rt, nodeIPs, iso());
    const eph = runtime.ephemeralStatuses?.(uid) ?? [];
    const status = eph.length ? { ...built, ephemeralContainerStatuses: ephemeralContainerStatuses(pod, eph) } : built;
    if (!sameStatus(pod, status)) {
      await client.patch({ ...PODS, namespace: pod.metadata.namespace }, pod.metadata.name!,
        'merge', { status }, { subresource: 'status' });
    }
    if (status.phase === 'Succeeded' || status.phase === 'Failed') await runtime.killPod(uid);
  }

  function beginTermination(pod: Pod): void {
    const uid = pod.metadata.uid!;
    if (terminating.has(uid)) return;
    podEvents(pod, killingEvents(pod, runtime.podStatus(uid)));
    const grace = pod.metadata.deletionGracePeriodSeconds
      ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    if (runtime.stopPod) {
      // SIGTERM now, SIGKILL after the grace period; the pod goes once its containers have.
      terminating.set(uid, undefined);
      const done = () => void finishTermination(pod);
      runtime.stopPod(uid, grace * 1000 * scale).then(done, done);
      return;
    }
    const t = setTimeout(() => void finishTermination(pod), grace * 1000 * scale);
    t.unref?.();
    terminating.set(uid, t);
  }

  async function finishTermination(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid!;
    if (!running) return;
    await runtime.killPod(uid);
    try {
      await client.delete({ ...PODS, namespace: pod.metadata.namespace }, pod.metadata.name!,
        { gracePeriodSeconds: 0, preconditions: { uid } });
    } catch (e) {
      if (!isKdpError(e, 'KDP_NOT_FOUND') && !isKdpError(e, 'KDP_CONFLICT')) {
        terminating.delete(uid);
        queue.addAfter(objectKey(pod), 100);
      }
    }
  }

  function onPodGone(pod: Pod): void {
    const uid = pod.metadata.uid!;
    clearTimeout(terminating.get(uid));
    terminating.delete(uid);
    uidToKey.delete(uid);
    marks.delete(uid);
    // The pod is gone from the API server: its containers' log files go too (upstream's GC).
    void runtime.killPod(uid).catch(() => undefined).then(() => runtime.logStore?.removePod(uid));
  }

  runtime.onChange((uid) => { const k = uidToKey.get(uid); if (k) queue.add(k); });
  runtime.onEvent?.((uid, e) => {
    const k = uidToKey.get(uid);
    const pod = k ? sources.pods.get(k) : undefined;
    if (pod && running) podEvents(pod, [e]);
  });

  return {
    nodeName,
    async start() {
      if (running) return;
      running = true;
      if (queue.isShuttingDown()) {
        queue = buildWorkQueue<string>({ baseDelayMs: 20, maxDelayMs: 10_000 * scale + 100 });
      }
      unsubs.push(sources.pods.subscribe(nodeName, {
        onAdd: (p) => queue.add(objectKey(p)),
        onUpdate: (_, p) => queue.add(objectKey(p)),
        onDelete: (p) => onPodGone(p),
      }));
      unsubs.push(sources.nodes.subscribe(nodeName, {
        onUpdate: (a, b) => {
          if (!a.spec?.podCIDR && b.spec?.podCIDR) {
            for (const p of sources.pods.list(nodeName)) queue.add(objectKey(p));
          }
          const ready = b.status?.conditions?.find((c) => c.type === 'Ready');
          if (ready && ready.status !== 'True') void postStatus(true).catch(() => undefined);
        },
      }));
      await register();
      sources.start();
      await lease.renew().catch(() => undefined);
      every((o.leaseRenewIntervalMs ?? 10_000) * scale, () => lease.renew());
      every((o.nodeStatusUpdateMs ?? 10_000) * scale, () => postStatus(false));
      void runWorkers(queue, o.workers ?? 32, syncPod);
      await sources.pods.waitForSync();
      // Logs of pods removed while this kubelet was down go (upstream's orphaned pod cleanup).
      const bound = new Set(sources.pods.list(nodeName).map((p) => p.metadata.uid));
      for (const uid of runtime.logStore?.podUids() ?? []) if (!bound.has(uid)) runtime.logStore!.removePod(uid);
      for (const p of sources.pods.list(nodeName)) queue.add(objectKey(p));
    },
    async stop() {
      running = false;
      for (const t of timers.splice(0)) clearInterval(t);
      for (const t of terminating.values()) clearTimeout(t);
      terminating.clear();
      for (const u of unsubs.splice(0)) u();
      queue.shutDown();
      sources.stop();
    },
    pod: (namespace, name) => sources.pods.get(`${namespace}/${name}`),
    pods: () => sources.pods.list(nodeName),
    logs(namespace, podName, container, previous) {
      const pod = sources.pods.get(`${namespace}/${podName}`);
      if (!pod) throw notFound(podName);
      return runtime.logs(pod.metadata.uid!, container, previous);
    },
  };
}

function notFound(name: string) {
  return kdpError('KDP_NOT_FOUND', `pods "${name}" not found`, { name, kind: 'pods' });
}

function sameStatus(pod: Pod, s: NonNullable<Pod['status']>): boolean {
  const cur = pod.status ?? {};
  const pick = (x: typeof cur) => JSON.stringify([x.phase, x.podIP, x.hostIP, x.startTime,
    x.conditions?.map((c) => [c.type, c.status, c.reason]),
    ...[x.initContainerStatuses, x.containerStatuses].map((l) => l?.map((c) =>
      [c.name, c.ready, c.restartCount, Object.keys(c.state ?? {}), c.state?.waiting?.reason,
        Object.keys(c.lastState ?? {})])),
    (x as { ephemeralContainerStatuses?: Array<{ name: string; state?: object }> }).ephemeralContainerStatuses
      ?.map((c) => [c.name, Object.keys(c.state ?? {})])]);
  return pick(cur) === pick(s);
}
