// The scheduler: watches pods without spec.nodeName that name this scheduler, filters and scores
// the nodes, and binds via `pods/binding`. As upstream, a chosen pod is "assumed" onto its node
// at once (so the next pod sees its requests) while the binding is written asynchronously; a
// failed binding forgets the assumption and retries with back-off. A pod with no fitting node
// gets `PodScheduled=False/Unschedulable` plus a FailedScheduling event and waits for a node or
// assigned-pod change.

import type { Node, Pod, PodCondition } from '../api/types.js';
import { isKdpError } from '../errors.js';
import { objectKey } from '../client/cache.js';
import { buildInformerFactory, type InformerFactory } from '../client/informer.js';
import type { Client } from '../client/types.js';
import { buildEventRecorder, type EventRecorder } from '../client/events.js';
import { buildYielder } from '../client/workqueue.js';
import { runFilters, type FilterFailure, type PodFacts } from './filters.js';
import { fitErrorMessage, NO_NODES_MESSAGE } from './messages.js';
import {
  addPodToNode, buildNodeInfo, podHostPorts, podResources, removePodFromNode, setNode,
  type NodeInfo,
} from './node-info.js';
import { buildSchedulingQueue } from './queue.js';
import { seededRng, type Rng } from './rng.js';
import { numFeasibleNodesToFind, scoreNode } from './scores.js';

export const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
export const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

export interface SchedulerOptions {
  readonly schedulerName?: string;
  /** Seed for the tie-break RNG (ignored when `rng` is given). */
  readonly seed?: number;
  readonly rng?: Rng;
  /** 0 = upstream's adaptive percentage. */
  readonly percentageOfNodesToScore?: number;
  /** Multiplies every timer below (tests and demos shrink time). Default 1. */
  readonly timeScale?: number;
  /** Parked unschedulable pods are retried at least this often. Default 60 s. */
  readonly unschedulableFlushMs?: number;
  /** Retry delay after a failed binding. Default 1 s. */
  readonly bindBackoffMs?: number;
  readonly maxInFlightBinds?: number;
  /** Record Events (default true). */
  readonly events?: boolean;
}

export interface Scheduler {
  start(): Promise<void>;
  stop(): void;
  /** Counters for benches and status output. */
  stats(): { scheduled: number; failed: number; bindErrors: number };
}

export interface SchedulerDeps {
  readonly client: Client;
  /** Shared informers of the process; the scheduler builds its own when absent. */
  readonly informers?: InformerFactory;
  readonly options?: SchedulerOptions;
}

export function buildScheduler(deps: SchedulerDeps): Scheduler {
  const { client } = deps;
  const o = deps.options ?? {};
  const scale = o.timeScale ?? 1;
  const name = o.schedulerName ?? 'default-scheduler';
  const rng = o.rng ?? seededRng(o.seed ?? Date.now());
  const ownInformers = !deps.informers;
  const informers = deps.informers ?? buildInformerFactory(client);
  const podInf = informers.informerFor<Pod>(PODS);
  const nodeInf = informers.informerFor<Node>(NODES);
  const queue = buildSchedulingQueue((o.unschedulableFlushMs ?? 60_000) * scale);
  const recorder: EventRecorder = buildEventRecorder(client, {
    component: 'default-scheduler', enabled: o.events !== false,
  });
  const nodes = new Map<string, NodeInfo>();
  let order: NodeInfo[] = [];
  let nextStart = 0;
  const podNode = new Map<string, string>(); // pod key → node it is counted on
  const assumed = new Set<string>();
  const maxInFlight = o.maxInFlightBinds ?? 256;
  let inFlight = 0;
  let slotWaiter: (() => void) | undefined;
  let running = false;
  const counters = { scheduled: 0, failed: 0, bindErrors: 0 };

  const responsible = (p: Pod) => (p.spec?.schedulerName ?? 'default-scheduler') === name;
  const terminal = (p: Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
  const wantsScheduling = (p: Pod) => !p.spec?.nodeName && responsible(p)
    && !p.metadata.deletionTimestamp && !(p.spec?.schedulingGates?.length) && !terminal(p);

  function account(key: string, pod: Pod | undefined): void {
    const nodeName = pod && !terminal(pod) ? pod.spec?.nodeName : undefined;
    const prev = podNode.get(key);
    if (prev && prev !== nodeName) {
      const info = nodes.get(prev);
      if (info) removePodFromNode(info, key);
      podNode.delete(key);
    }
    if (nodeName) {
      const info = nodes.get(nodeName);
      if (info && pod) addPodToNode(info, key, pod);
      podNode.set(key, nodeName);
    }
  }

  function onPod(pod: Pod, old?: Pod): void {
    const key = objectKey(pod);
    if (pod.spec?.nodeName) {
      assumed.delete(key);
      queue.delete(key);
      if (!old || old.spec?.nodeName !== pod.spec.nodeName || terminal(pod) !== terminal(old)) {
        account(key, pod);
        if (terminal(pod)) queue.moveAllToActive();
      }
      return;
    }
    if (!wantsScheduling(pod)) { queue.delete(key); return; }
    if (old && !specChanged(old, pod)) return; // e.g. our own status update
    queue.add(key);
  }

  function onNode(node: Node, old?: Node): void {
    const nm = node.metadata.name!;
    let info = nodes.get(nm);
    if (!info) {
      info = buildNodeInfo(node);
      nodes.set(nm, info);
      order.push(info);
      for (const [k, n] of podNode) {
        if (n !== nm) continue;
        const p = podInf.cache.get(k);
        if (p) addPodToNode(info, k, p);
      }
    } else {
      setNode(info, node);
    }
    if (!old || nodeSchedulingChanged(old, node)) queue.moveAllToActive();
  }

  podInf.addEventHandler({
    onAdd: (p) => onPod(p),
    onUpdate: (a, b) => onPod(b, a),
    onDelete: (p) => {
      const key = objectKey(p);
      queue.delete(key);
      assumed.delete(key);
      if (podNode.has(key)) { account(key, undefined); queue.moveAllToActive(); }
    },
  });
  nodeInf.addEventHandler({
    onAdd: (n) => onNode(n),
    onUpdate: (a, b) => onNode(b, a),
    onDelete: (n) => {
      nodes.delete(n.metadata.name!);
      order = order.filter((i) => i.node.metadata.name !== n.metadata.name);
    },
  });

  function scheduleOne(key: string): void {
    const pod = podInf.cache.get(key);
    if (!pod || !wantsScheduling(pod) || assumed.has(key)) return;
    if (order.length === 0) { fail(pod, NO_NODES_MESSAGE); return; }
    const facts: PodFacts = { pod, res: podResources(pod), ports: podHostPorts(pod) };
    const want = numFeasibleNodesToFind(order.length, o.percentageOfNodesToScore);
    const feasible: NodeInfo[] = [];
    const failures: FilterFailure[] = [];
    const n = order.length;
    let i = 0;
    for (; i < n && feasible.length < want; i++) {
      const info = order[(nextStart + i) % n]!;
      const f = runFilters(facts, info);
      if (f) failures.push(f); else feasible.push(info);
    }
    nextStart = (nextStart + i) % n;
    if (feasible.length === 0) { fail(pod, fitErrorMessage(n, failures)); return; }
    let best = feasible[0]!;
    let bestScore = -1;
    let ties = 0;
    for (const info of feasible) {
      const s = scoreNode(facts.res, info);
      if (s > bestScore) { best = info; bestScore = s; ties = 1; }
      else if (s === bestScore && rng() * ++ties < 1) best = info; // reservoir sampling
    }
    assume(key, pod, best);
  }

  function assume(key: string, pod: Pod, info: NodeInfo): void {
    const nodeName = info.node.metadata.name!;
    assumed.add(key);
    account(key, { ...pod, spec: { ...pod.spec!, nodeName } });
    inFlight++;
    void bind(key, pod, nodeName).finally(() => {
      inFlight--;
      slotWaiter?.();
      slotWaiter = undefined;
    });
  }

  async function bind(key: string, pod: Pod, nodeName: string): Promise<void> {
    const ns = pod.metadata.namespace!;
    try {
      await client.create({ ...PODS, namespace: ns }, {
        apiVersion: 'v1', kind: 'Binding',
        metadata: { name: pod.metadata.name, namespace: ns, uid: pod.metadata.uid },
        target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
      }, { subresource: 'binding', name: pod.metadata.name });
      counters.scheduled++;
      recorder.event(asPod(pod), 'Normal', 'Scheduled',
        `Successfully assigned ${ns}/${pod.metadata.name} to ${nodeName}`);
    } catch (e) {
      counters.bindErrors++;
      if (!assumed.has(key)) return;
      assumed.delete(key);
      const cur = podInf.cache.get(key);
      account(key, cur?.spec?.nodeName ? cur : undefined);
      if (isKdpError(e, 'KDP_NOT_FOUND')) return;
      queue.addBackoff(key, (o.bindBackoffMs ?? 1000) * scale);
    }
  }

  function fail(pod: Pod, message: string): void {
    counters.failed++;
    const key = objectKey(pod);
    queue.addUnschedulable(key);
    const cur = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled');
    if (cur?.status === 'False' && cur.message === message) return;
    recorder.event(asPod(pod), 'Warning', 'FailedScheduling', message);
    const cond: PodCondition = {
      type: 'PodScheduled', status: 'False', lastProbeTime: null,
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      reason: 'Unschedulable', message,
    };
    const conditions = [...(pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled'),
      cond];
    void client.patch({ ...PODS, namespace: pod.metadata.namespace }, pod.metadata.name!, 'merge',
      { status: { conditions } }, { subresource: 'status' }).catch(() => undefined);
  }

  async function loop(): Promise<void> {
    const yieldNow = buildYielder();
    while (running) {
      await yieldNow();
      const key = await queue.pop();
      if (key === undefined) return;
      if (inFlight >= maxInFlight) await new Promise<void>((r) => { slotWaiter = r; });
      try { scheduleOne(key); } catch { queue.addBackoff(key, 1000 * scale); }
    }
  }

  return {
    async start() {
      if (running) return;
      running = true;
      if (ownInformers) informers.start(); else { podInf.start(); nodeInf.start(); }
      await Promise.all([podInf.waitForSync(), nodeInf.waitForSync()]);
      void loop();
    },
    stop() {
      running = false;
      queue.close();
      if (ownInformers) informers.stop();
    },
    stats: () => ({ ...counters }),
  };
}

function asPod(p: Pod): Pod {
  return { ...p, apiVersion: 'v1', kind: 'Pod' };
}

function specChanged(a: Pod, b: Pod): boolean {
  return JSON.stringify(a.spec) !== JSON.stringify(b.spec)
    || JSON.stringify(a.metadata.labels) !== JSON.stringify(b.metadata.labels);
}

function nodeSchedulingChanged(a: Node, b: Node): boolean {
  return JSON.stringify([a.spec, a.metadata.labels, a.status?.allocatable])
    !== JSON.stringify([b.spec, b.metadata.labels, b.status?.allocatable]);
}
