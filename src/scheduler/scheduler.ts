// The scheduler: watches pods without spec.nodeName that name this scheduler, filters and scores
// the nodes, and binds via `pods/binding`. As upstream, a chosen pod is "assumed" onto its node
// at once (so the next pod sees its requests) while the binding is written asynchronously; a
// failed binding forgets the assumption and retries with back-off. A pod with no fitting node
// gets `PodScheduled=False/Unschedulable` plus a FailedScheduling event and waits for a node or
// assigned-pod change. The node view is cache.ts, choosing a node schedule-one.ts; this file
// wires the informers to them and binds.

import type { Node, Pod, PodCondition } from '../api/types.js';
import { isKdpError } from '../errors.js';
import { objectKey } from '../client/cache.js';
import { buildInformerFactory, type InformerFactory } from '../client/informer.js';
import type { Client } from '../client/types.js';
import { buildEventRecorder, type EventRecorder } from '../client/events.js';
import { buildYielder } from '../client/workqueue.js';
import { buildSchedulerCache, isTerminal as terminal } from './cache.js';
import type { PodFacts } from './filters.js';
import { fitErrorMessage, NO_NODES_MESSAGE } from './messages.js';
import { podHostPorts, podResources, type NodeInfo } from './node-info.js';
import { buildSchedulingQueue } from './queue.js';
import { seededRng, type Rng } from './rng.js';
import { findNodesThatFit, selectHost } from './schedule-one.js';
import { numFeasibleNodesToFind } from './scores.js';

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
  const cache = buildSchedulerCache();
  const { assumed, account } = cache;
  let nextStart = 0;
  const maxInFlight = o.maxInFlightBinds ?? 256;
  let inFlight = 0;
  let slotWaiter: (() => void) | undefined;
  let running = false;
  const counters = { scheduled: 0, failed: 0, bindErrors: 0 };

  const responsible = (p: Pod) => (p.spec?.schedulerName ?? 'default-scheduler') === name;
  const wantsScheduling = (p: Pod) => !p.spec?.nodeName && responsible(p)
    && !p.metadata.deletionTimestamp && !(p.spec?.schedulingGates?.length) && !terminal(p);

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
    cache.upsertNode(node, (k) => podInf.cache.get(k));
    if (!old || nodeSchedulingChanged(old, node)) queue.moveAllToActive();
  }

  podInf.addEventHandler({
    onAdd: (p) => onPod(p),
    onUpdate: (a, b) => onPod(b, a),
    onDelete: (p) => {
      const key = objectKey(p);
      queue.delete(key);
      assumed.delete(key);
      if (cache.counts(key)) { account(key, undefined); queue.moveAllToActive(); }
    },
  });
  nodeInf.addEventHandler({
    onAdd: (n) => onNode(n),
    onUpdate: (a, b) => onNode(b, a),
    onDelete: (n) => cache.removeNode(n.metadata.name!),
  });

  function scheduleOne(key: string): void {
    const pod = podInf.cache.get(key);
    if (!pod || !wantsScheduling(pod) || assumed.has(key)) return;
    const order = cache.order;
    if (order.length === 0) { fail(pod, NO_NODES_MESSAGE); return; }
    const facts: PodFacts = { pod, res: podResources(pod), ports: podHostPorts(pod) };
    const want = numFeasibleNodesToFind(order.length, o.percentageOfNodesToScore);
    const fit = findNodesThatFit(facts, order, want, nextStart);
    nextStart = fit.nextStart;
    if (fit.feasible.length === 0) { fail(pod, fitErrorMessage(order.length, [...fit.failures])); return; }
    assume(key, pod, selectHost(facts, fit.feasible, rng));
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
