// The node IPAM controller (upstream RangeAllocator): gives every node without
// `spec.podCIDRs` the next free block of the cluster CIDR (one /24 of 10.244.0.0/16 by default,
// in node order), never changing CIDRs a node already has. When the range is exhausted the node
// gets no podCIDR and a `CIDRNotAvailable` event. Deleted nodes return their block.

import type { Node } from '../../api/types.js';
import { cidrsOverlap } from '../../api/net.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { NODES } from '../refs.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';
import { buildCidrSet } from './cidr-set.js';

export function buildNodeIpamController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const nodeInf = ctx.informers.informerFor<Node>(NODES);
  const recorder = ctx.recorder('cidrAllocator');
  const set = buildCidrSet(options.clusterCIDR, options.nodeCIDRMaskSize);
  if (cidrsOverlap(options.serviceCIDR, options.clusterCIDR)) {
    try { set.occupy(options.serviceCIDR); } catch { /* larger than the cluster CIDR */ }
  }
  const assigned = new Map<string, string[]>(); // node → CIDRs we hold for it
  let primed = false;
  const c = buildQueueController('nodeipam', 1, sync);

  const cidrsOf = (n: Node) => n.spec?.podCIDRs?.length ? n.spec.podCIDRs
    : n.spec?.podCIDR ? [n.spec.podCIDR] : [];

  function prime(): void {
    // Occupy what existing nodes hold before handing anything out (upstream does this at start).
    if (primed) return;
    primed = true;
    for (const n of nodeInf.cache.list()) occupy(n);
  }
  function occupy(n: Node): void {
    const cidrs = cidrsOf(n);
    if (!cidrs.length || assigned.has(n.metadata.name!)) return;
    try { for (const x of cidrs) set.occupy(x); } catch { return; }
    assigned.set(n.metadata.name!, [...cidrs]);
  }

  nodeInf.addEventHandler({
    onAdd: (n) => c.queue.add(n.metadata.name!),
    onUpdate: (_, n) => { if (!cidrsOf(n).length) c.queue.add(n.metadata.name!); else occupy(n); },
    onDelete: (n) => {
      const held = assigned.get(n.metadata.name!);
      assigned.delete(n.metadata.name!);
      for (const x of held ?? []) { try { set.release(x); } catch { /* ignore */ } }
    },
  });

  async function sync(name: string): Promise<void> {
    if (!nodeInf.hasSynced()) { c.queue.addAfter(name, 20); return; }
    prime();
    const node = nodeInf.cache.get(name);
    if (!node) return;
    if (cidrsOf(node).length) { occupy(node); return; }
    let cidr = assigned.get(name)?.[0];
    if (!cidr) {
      try {
        cidr = set.allocateNext();
      } catch (e) {
        recorder.event(withKind(node), 'Normal', 'CIDRNotAvailable',
          `Node ${name} status is now: CIDRNotAvailable`);
        throw e;
      }
      assigned.set(name, [cidr]);
    }
    try {
      await client.patch(NODES, name, 'merge', { spec: { podCIDR: cidr, podCIDRs: [cidr] } });
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) {
        assigned.delete(name);
        set.release(cidr);
        return;
      }
      recorder.event(withKind(node), 'Normal', 'CIDRAssignmentFailed',
        `Node ${name} status is now: CIDRAssignmentFailed`);
      throw e;
    }
  }

  return { name: 'nodeipam', start: c.start, stop: c.stop };
}

function withKind(n: Node): Node {
  return { ...n, apiVersion: 'v1', kind: 'Node' };
}
