// The cloud-controller-manager's route controller (k8s.io/cloud-provider/controllers/route) over
// the lab cloud's route table (cloud.ts). Every reconcile (each --route-reconciliation-period,
// 10 s, and on a Node added, deleted or given podCIDRs):
// - a route {targetNode, destinationCIDR} for every podCIDR of every Node that has one and no
//   route yet; a failed create is a Warning `FailedToCreateRoute` on the Node;
// - routes of the cluster CIDRs whose node is gone, or no longer has that podCIDR, are deleted
//   (routes outside the cluster CIDRs are not the controller's);
// - each Node with podCIDRs gets `NetworkUnavailable` False / `RouteCreated` once all its routes
//   exist, True / `NoRouteCreated` while one is missing (written only when it changes), by a
//   strategic merge patch of status.conditions, as upstream's nodeutil.SetNodeCondition.
// What a route means in the lab cloud (which nodes' namespaces get it) is the cloud's business.

import type { Node, NodeCondition } from '../../api/types.js';
import { cidrsOverlap } from '../../api/net.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { NODES } from '../refs.js';
import { isoNow, type Controller } from '../util.js';
import type { CloudRoute, CloudRoutes } from './cloud.js';

export const ROUTE_CONTROLLER_COMPONENT = 'route_controller';
export const ROUTE_RECONCILIATION_PERIOD_MS = 10_000;

const podCIDRsOf = (n: Node) => n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []);

export function buildRouteController(ctx: ControllerContext, routes?: CloudRoutes): Controller {
  const { client, options } = ctx;
  const table = routes ?? options.cloud?.routes;
  if (options.cloudProvider === 'none' || !table) return { name: 'route', start() {}, stop() {} };
  const nodeInf = ctx.informers.informerFor<Node>(NODES);
  const recorder = ctx.recorder(ROUTE_CONTROLLER_COMPONENT);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let chain: Promise<void> = Promise.resolve();
  let again = false;
  let running = false;

  const inCluster = (cidr: string) => options.clusterCIDRs.some((c) => cidrsOverlap(c, cidr));
  const routeKey = (r: CloudRoute) => `${r.targetNode}\0${r.destinationCIDR}`;

  async function setCondition(node: Node, created: boolean): Promise<void> {
    const cur = node.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');
    const status = created ? 'False' : 'True';
    const reason = created ? 'RouteCreated' : 'NoRouteCreated';
    if (cur?.status === status && cur.reason === reason) return;
    const now = isoNow(options.now());
    const cond: NodeCondition = {
      type: 'NetworkUnavailable', status, reason,
      message: created ? 'RouteController created a route' : 'RouteController failed to create a route',
      lastHeartbeatTime: now, lastTransitionTime: now,
    };
    await client.patch(NODES, node.metadata.name!, 'strategic', { status: { conditions: [cond] } },
      { subresource: 'status' }).catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
  }

  async function reconcile(): Promise<void> {
    const nodes = nodeInf.cache.list();
    const have = new Map((await table!.list()).map((r) => [routeKey(r), r]));
    const want = new Set<string>();
    for (const node of nodes) {
      const name = node.metadata.name!;
      let created = true;
      for (const cidr of podCIDRsOf(node)) {
        const r = { targetNode: name, destinationCIDR: cidr };
        want.add(routeKey(r));
        if (have.has(routeKey(r))) continue;
        try {
          await table!.create(r);
        } catch (e) {
          created = false;
          recorder.event({ ...node, apiVersion: 'v1', kind: 'Node' }, 'Warning', 'FailedToCreateRoute',
            `Could not create route ${name} ${cidr} for node ${name}: ${(e as Error).message}`);
        }
      }
      if (podCIDRsOf(node).length) await setCondition(node, created);
    }
    for (const [k, r] of have) {
      if (!want.has(k) && inCluster(r.destinationCIDR)) await table!.delete(r);
    }
    await table!.settle?.();
  }

  /** One reconcile at a time; a request while one runs makes one more after it. */
  const kick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    chain = chain.then(async () => {
      do {
        again = false;
        await reconcile().catch(() => undefined); // retried next period
      } while (again && !stopped);
      running = false;
    });
  };

  // Ready counts too: a node booted anew (Ready again) has lost its kernel routes, which the
  // cloud's settle puts back.
  const relevant = (n: Node) => JSON.stringify([podCIDRsOf(n), n.metadata.annotations ?? {},
    (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP'),
    n.status?.conditions?.find((c) => c.type === 'Ready')?.status]);
  return {
    name: 'route',
    start() {
      nodeInf.addEventHandler({ onAdd: kick, onDelete: kick,
        onUpdate: (a, b) => { if (relevant(a) !== relevant(b)) kick(); } });
      kick();
      timer = setInterval(kick, Math.max(5, options.scaled(ROUTE_RECONCILIATION_PERIOD_MS)));
      timer.unref?.();
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
