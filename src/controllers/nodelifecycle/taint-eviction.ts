// Taint-based eviction (upstream's taint eviction controller): a pod on a node with NoExecute
// taints it does not tolerate is deleted at once; one that tolerates them all for a limited
// time (the smallest matching tolerationSeconds) is deleted when that time runs out, unless the
// taints go away first. Deletion is the normal graceful delete, with a TaintManagerEviction
// event.

import type { Node, Pod, Taint, Toleration } from '../../api/types.js';
import { isKdpError } from '../../errors.js';
import { objectKey } from '../../client/cache.js';
import { toleratesTaint } from '../../api/node-affinity.js';
import type { ControllerContext } from '../options.js';
import { inNs, NODES, PODS } from '../refs.js';
import { isPodTerminal, type Controller } from '../util.js';
import { POD_NODE_INDEX, podNodeIndex } from './controller.js';

/** Seconds until eviction: 0 = now, undefined = never (upstream getMinTolerationTime). */
export function evictionDelaySeconds(
  taints: readonly Taint[], tolerations: readonly Toleration[] | undefined,
): number | undefined {
  const noExec = taints.filter((t) => t.effect === 'NoExecute');
  if (noExec.length === 0) return undefined;
  let min: number | undefined;
  for (const taint of noExec) {
    const used = (tolerations ?? []).filter((t) => toleratesTaint(t, taint));
    if (used.length === 0) return 0;
    for (const t of used) {
      if (t.tolerationSeconds === undefined) continue;
      const s = Math.max(0, t.tolerationSeconds);
      min = min === undefined ? s : Math.min(min, s);
    }
  }
  return min;
}

export function buildTaintEvictionController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const nodeInf = ctx.informers.informerFor<Node>(NODES);
  const podInf = ctx.informers.informerFor<Pod>(PODS,
    { indexers: { [POD_NODE_INDEX]: podNodeIndex } });
  const recorder = ctx.recorder('taint-eviction-controller');
  const scheduled = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  let running = false;

  function cancel(key: string): void {
    const s = scheduled.get(key);
    if (s) clearTimeout(s.timer);
    scheduled.delete(key);
  }

  function processPod(pod: Pod, node: Node | undefined): void {
    const key = objectKey(pod);
    if (!running) return;
    if (!node || pod.metadata.deletionTimestamp || isPodTerminal(pod)) { cancel(key); return; }
    const delay = evictionDelaySeconds(node.spec?.taints ?? [], pod.spec?.tolerations);
    if (delay === undefined) { cancel(key); return; }
    const at = options.now() + delay * 1000 * options.timeScale;
    const cur = scheduled.get(key);
    if (cur && cur.at <= at) return; // an earlier eviction is already planned
    cancel(key);
    const timer = setTimeout(() => void evict(key), Math.max(0, at - options.now()));
    timer.unref?.();
    scheduled.set(key, { timer, at });
  }

  async function evict(key: string): Promise<void> {
    scheduled.delete(key);
    const pod = podInf.cache.get(key);
    if (!pod || pod.metadata.deletionTimestamp) return;
    recorder.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Normal', 'TaintManagerEviction',
      `Marking for deletion Pod ${key}`);
    try {
      await client.delete(inNs(PODS, pod.metadata.namespace), pod.metadata.name!);
    } catch (e) {
      if (!isKdpError(e, 'KDP_NOT_FOUND')) setTimeout(() => processPod(pod, nodeOf(pod)), 100);
    }
  }

  const nodeOf = (p: Pod) => (p.spec?.nodeName ? nodeInf.cache.get(p.spec.nodeName) : undefined);

  nodeInf.addEventHandler({
    onAdd: (n) => {
      for (const p of podInf.cache.byIndex(POD_NODE_INDEX, n.metadata.name!)) processPod(p, n);
    },
    onUpdate: (a, n) => {
      if (JSON.stringify(a.spec?.taints) === JSON.stringify(n.spec?.taints)) return;
      for (const p of podInf.cache.byIndex(POD_NODE_INDEX, n.metadata.name!)) processPod(p, n);
    },
  });
  podInf.addEventHandler({
    onAdd: (p) => processPod(p, nodeOf(p)),
    onUpdate: (a, p) => {
      if (a.spec?.nodeName === p.spec?.nodeName && a.metadata.deletionTimestamp
        === p.metadata.deletionTimestamp && a.status?.phase === p.status?.phase) return;
      processPod(p, nodeOf(p));
    },
    onDelete: (p) => cancel(objectKey(p)),
  });

  return {
    name: 'taint-eviction',
    start() {
      running = true;
      for (const p of podInf.cache.list()) processPod(p, nodeOf(p));
    },
    stop() {
      running = false;
      for (const k of [...scheduled.keys()]) cancel(k);
    },
  };
}
