// The node IPAM controller (upstream RangeAllocator): gives every node without
// `spec.podCIDRs` the next free block of each cluster CIDR (one /24 of 10.244.0.0/16 by default,
// in node order; dual stack: one block per family, `podCIDRs` ordered like the cluster CIDRs and
// `podCIDR` = the first), never changing CIDRs a node already has. When a range is exhausted the
// node gets no podCIDR and a `CIDRNotAvailable` event. Deleted nodes return their blocks.

import type { Node } from '../../api/types.js';
import { cidrsOverlap } from '../../api/net.js';
import { isKdpError, kdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { NODES } from '../refs.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';
import { allocateFromEach, buildCidrSet } from './cidr-set.js';

export function buildNodeIpamController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const nodeInf = ctx.informers.informerFor<Node>(NODES);
  const recorder = ctx.recorder('cidrAllocator');
  const sets = options.clusterCIDRs.map((cidr, i) => {
    const set = buildCidrSet(cidr, options.nodeCIDRMaskSizes[i]!);
    for (const svc of options.serviceCIDRs) {
      if (!cidrsOverlap(svc, cidr)) continue;
      try { set.occupy(svc); } catch { /* larger than the cluster CIDR */ }
    }
    return { cidr, set };
  });
  /** The set a CIDR of a node belongs to (by containment, so a node's order does not matter). */
  const setFor = (x: string) => sets.find((s) => cidrsOverlap(s.cidr, x))?.set;
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
    try { for (const x of cidrs) setFor(x)?.occupy(x); } catch { return; }
    assigned.set(n.metadata.name!, [...cidrs]);
  }

  nodeInf.addEventHandler({
    onAdd: (n) => c.queue.add(n.metadata.name!),
    onUpdate: (_, n) => { if (!cidrsOf(n).length) c.queue.add(n.metadata.name!); else occupy(n); },
    onDelete: (n) => {
      const held = assigned.get(n.metadata.name!);
      assigned.delete(n.metadata.name!);
      for (const x of held ?? []) { try { setFor(x)?.release(x); } catch { /* ignore */ } }
    },
  });

  async function sync(name: string): Promise<void> {
    if (!nodeInf.hasSynced()) { c.queue.addAfter(name, 20); return; }
    prime();
    const node = nodeInf.cache.get(name);
    if (!node) return;
    if (cidrsOf(node).length) { occupy(node); return; }
    let cidrs = assigned.get(name);
    if (!cidrs) {
      cidrs = allocate(node);
      assigned.set(name, cidrs);
    }
    try {
      await client.patch(NODES, name, 'merge', { spec: { podCIDR: cidrs[0], podCIDRs: cidrs } });
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) {
        assigned.delete(name);
        for (const x of cidrs) setFor(x)?.release(x);
        return;
      }
      recorder.event(withKind(node), 'Normal', 'CIDRAssignmentFailed',
        `Node ${name} status is now: CIDRAssignmentFailed`);
      throw e;
    }
  }

  /** One block from each set, in cluster-CIDR order; all or nothing. */
  function allocate(node: Node): string[] {
    try {
      return allocateFromEach(sets.map((s) => s.set));
    } catch (e) {
      recorder.event(withKind(node), 'Normal', 'CIDRNotAvailable',
        `Node ${node.metadata.name} status is now: CIDRNotAvailable`);
      throw e;
    }
  }

  return { name: 'nodeipam', start: c.start, stop: c.stop };
}

function withKind(n: Node): Node {
  return { ...n, apiVersion: 'v1', kind: 'Node' };
}
