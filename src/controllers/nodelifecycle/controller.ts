// The node lifecycle controller: every `nodeMonitorPeriod` it checks each node's heartbeat (its
// Lease renewTime or its Ready condition's lastHeartbeatTime, whichever moved last, timed by
// this controller's clock). After `nodeMonitorGracePeriod` without one, every node condition
// becomes Unknown ("Kubelet stopped posting node status.") and the node's pods are marked not
// ready. Taints follow the Ready condition: Unknown → node.kubernetes.io/unreachable, False →
// node.kubernetes.io/not-ready, each as NoSchedule and NoExecute; True removes them.
// (Upstream's zone disruption rate limiting is not modelled.)

import type { Lease, Node, NodeCondition, Pod, Taint } from '../../api/types.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { inNs, LEASES, NODES, PODS } from '../refs.js';
import { isoNow, type Controller } from '../util.js';

export const UNREACHABLE = 'node.kubernetes.io/unreachable';
export const NOT_READY = 'node.kubernetes.io/not-ready';
const CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
export const POD_NODE_INDEX = 'nodeName';
export const podNodeIndex = (p: Pod): string[] => (p.spec?.nodeName ? [p.spec.nodeName] : []);

interface Health { probeAt: number; leaseRenew?: string; heartbeat?: string }

export function buildNodeLifecycleController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const nodeInf = ctx.informers.informerFor<Node>(NODES);
  const leaseInf = ctx.informers.informerFor<Lease>(inNs(LEASES, 'kube-node-lease'));
  const podInf = ctx.informers.informerFor<Pod>(PODS,
    { indexers: { [POD_NODE_INDEX]: podNodeIndex } });
  const recorder = ctx.recorder('node-controller');
  const health = new Map<string, Health>();
  let timer: NodeJS.Timeout | undefined;
  let busy = false;

  function observe(node: Node): Health {
    const name = node.metadata.name!;
    const now = options.now();
    const lease = leaseInf.cache.getByName('kube-node-lease', name);
    const renew = lease?.spec?.renewTime;
    const hb = node.status?.conditions?.find((c) => c.type === 'Ready')?.lastHeartbeatTime;
    let h = health.get(name);
    if (!h) {
      h = { probeAt: now, leaseRenew: renew, heartbeat: hb };
      health.set(name, h);
      recorder.event({ ...node, apiVersion: 'v1', kind: 'Node' }, 'Normal', 'RegisteredNode',
        `Node ${name} event: Registered Node ${name} in Controller`);
    }
    if (renew !== h.leaseRenew || hb !== h.heartbeat) {
      h.probeAt = now;
      h.leaseRenew = renew;
      h.heartbeat = hb;
    }
    return h;
  }

  async function monitor(): Promise<void> {
    if (busy || !nodeInf.hasSynced() || !leaseInf.hasSynced()) return;
    busy = true;
    try {
      const names = new Set<string>();
      for (const node of nodeInf.cache.list()) {
        names.add(node.metadata.name!);
        try { await checkNode(node); } catch (e) {
          if (!isKdpError(e, 'KDP_CONFLICT') && !isKdpError(e, 'KDP_NOT_FOUND')) throw e;
        }
      }
      for (const n of health.keys()) if (!names.has(n)) health.delete(n);
    } finally {
      busy = false;
    }
  }

  async function checkNode(node: Node): Promise<void> {
    const h = observe(node);
    const now = options.now();
    let ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    if (now - h.probeAt > options.nodeMonitorGracePeriodMs && ready?.status !== 'Unknown') {
      node = await markUnknown(node);
      ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      await markPodsNotReady(node.metadata.name!);
    }
    await reconcileTaints(node, ready?.status ?? 'Unknown');
  }

  async function markUnknown(node: Node): Promise<Node> {
    const ts = isoNow(options.now());
    const prev = node.status?.conditions ?? [];
    const conditions: NodeCondition[] = CONDITIONS.map((type) => {
      const p = prev.find((c) => c.type === type);
      return {
        type, status: 'Unknown', lastHeartbeatTime: p?.lastHeartbeatTime ?? ts,
        lastTransitionTime: ts, reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
      };
    });
    const others = prev.filter((c) => !CONDITIONS.includes(c.type));
    const out = await client.update<Node>(NODES, {
      ...node, status: { ...node.status, conditions: [...conditions, ...others] },
    }, { subresource: 'status' });
    recorder.event({ ...node, apiVersion: 'v1', kind: 'Node' }, 'Normal', 'NodeNotReady',
      `Node ${node.metadata.name} status is now: NodeNotReady`);
    return out;
  }

  async function markPodsNotReady(nodeName: string): Promise<void> {
    const ts = isoNow(options.now());
    for (const pod of podInf.cache.byIndex(POD_NODE_INDEX, nodeName)) {
      const conds = pod.status?.conditions ?? [];
      if (!conds.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
      const next = conds.map((c) => c.type === 'Ready' || c.type === 'ContainersReady'
        ? { ...c, status: 'False' as const, lastTransitionTime: ts } : c);
      const updated = await client.patch(inNs(PODS, pod.metadata.namespace), pod.metadata.name!, 'merge',
        { status: { conditions: next } }, { subresource: 'status' })
        .then(() => true, (e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; return false; });
      // As upstream's MarkPodsNotReady: after the update, so the pod still exists.
      if (updated) recorder.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'NodeNotReady', 'Node is not ready');
    }
  }

  async function reconcileTaints(node: Node, ready: string): Promise<void> {
    const ts = isoNow(options.now());
    const want: string | undefined = ready === 'Unknown' ? UNREACHABLE
      : ready === 'False' ? NOT_READY : undefined;
    const cur = node.spec?.taints ?? [];
    const keep = cur.filter((t) =>
      (t.key !== UNREACHABLE && t.key !== NOT_READY) || t.key === want);
    const next: Taint[] = [...keep];
    if (want) {
      for (const effect of ['NoSchedule', 'NoExecute'] as const) {
        if (!keep.some((t) => t.key === want && t.effect === effect)) {
          next.push({ key: want, effect, ...(effect === 'NoExecute' ? { timeAdded: ts } : {}) });
        }
      }
    }
    if (JSON.stringify(next) === JSON.stringify(cur)) return;
    await client.update(NODES, { ...node, spec: { ...node.spec, taints: next } });
  }

  return {
    name: 'nodelifecycle',
    start() {
      timer = setInterval(() => void monitor().catch(() => undefined),
        Math.max(5, options.nodeMonitorPeriodMs));
      timer.unref?.();
    },
    stop() { clearInterval(timer); },
  };
}
