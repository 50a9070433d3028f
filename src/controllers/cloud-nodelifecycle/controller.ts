// The cloud-controller-manager's node lifecycle controller
// (k8s.io/cloud-provider/controllers/nodelifecycle) over the lab cloud's instances (lab cloud:
// a node's machine is its namespace on this host). Every --node-monitor-period (5 s): a Node whose
// Ready condition is not True (the node lifecycle controller marks it Unknown after the grace
// period with no heartbeat) and whose machine no longer exists is deleted, with a Normal
// `DeletingNode` event, as upstream. A Ready node is never looked up: a host that is gone stops
// heartbeating first, so the grace period always passes before its Node goes.

import type { Node } from '../../api/types.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { NODES } from '../refs.js';
import type { Controller } from '../util.js';
import type { CloudInstances } from '../route/cloud.js';

export const CLOUD_NODE_LIFECYCLE_COMPONENT = 'cloud-node-lifecycle-controller';

export function buildCloudNodeLifecycleController(ctx: ControllerContext, instances?: CloudInstances): Controller {
  const { client, options } = ctx;
  const cloud = instances ?? options.cloud?.instances;
  if (options.cloudProvider === 'none' || !cloud) return { name: 'cloud-node-lifecycle', start() {}, stop() {} };
  const nodeInf = ctx.informers.informerFor<Node>(NODES);
  const recorder = ctx.recorder(CLOUD_NODE_LIFECYCLE_COMPONENT);
  let timer: NodeJS.Timeout | undefined;
  let busy = false;

  async function monitor(): Promise<void> {
    if (busy) return;
    busy = true;
    try {
      for (const node of nodeInf.cache.list()) {
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
        if (ready === 'True') continue;
        const name = node.metadata.name!;
        if (await cloud!.exists(name)) continue;
        recorder.event({ ...node, apiVersion: 'v1', kind: 'Node' }, 'Normal', 'DeletingNode',
          `Deleting node ${name} because it does not exist in the cloud provider`);
        await client.delete(NODES, name, { preconditions: { uid: node.metadata.uid! } }).catch((e) => {
          if (!isKdpError(e, 'KDP_NOT_FOUND') && !isKdpError(e, 'KDP_CONFLICT')) throw e;
        });
      }
    } finally {
      busy = false;
    }
  }

  return {
    name: 'cloud-node-lifecycle',
    start() {
      timer = setInterval(() => void monitor().catch(() => undefined), Math.max(5, options.nodeMonitorPeriodMs));
      timer.unref?.();
    },
    stop() { clearInterval(timer); },
  };
}
