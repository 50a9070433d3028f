// The default filter plugins, run in upstream's order (NodeUnschedulable, TaintToleration,
// NodeAffinity, NodePorts, NodeResourcesFit); a node is rejected by the first that fails, with
// upstream's reason strings. `unresolvable` marks failures preemption cannot help with.

import type { Pod } from '../api/types.js';
import { firstUntoleratedTaint, podMatchesNodeSelectorAndAffinity } from '../api/node-affinity.js';
import { portsConflict, type HostPort, type NodeInfo, type PodResources } from './node-info.js';

export interface FilterFailure {
  readonly reasons: string[];
  readonly unresolvable: boolean;
}

/** What filtering needs to know about the pod, computed once per scheduling attempt. */
export interface PodFacts {
  readonly pod: Pod;
  readonly res: PodResources;
  readonly ports: HostPort[];
}

const UNSCHEDULABLE_TAINT =
  { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' as const };

export function runFilters(p: PodFacts, info: NodeInfo): FilterFailure | undefined {
  const node = info.node;
  const tolerations = p.pod.spec?.tolerations;
  if (node.spec?.unschedulable
    && firstUntoleratedTaint([UNSCHEDULABLE_TAINT], tolerations, ['NoSchedule'])) {
    return { reasons: ['node(s) were unschedulable'], unresolvable: true };
  }
  const taint = firstUntoleratedTaint(node.spec?.taints, tolerations, ['NoSchedule', 'NoExecute']);
  if (taint) {
    return {
      reasons: [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`],
      unresolvable: true,
    };
  }
  if (!podMatchesNodeSelectorAndAffinity(p.pod, node)) {
    return { reasons: ["node(s) didn't match Pod's node affinity/selector"], unresolvable: true };
  }
  if (p.ports.length && p.ports.some((a) => info.usedPorts.some((b) => portsConflict(a, b)))) {
    return {
      reasons: ["node(s) didn't have free ports for the requested pod ports"], unresolvable: false,
    };
  }
  return fitsResources(p.res, info);
}

function fitsResources(res: PodResources, info: NodeInfo): FilterFailure | undefined {
  const reasons: string[] = [];
  if (info.pods.size + 1 > info.allocPods) reasons.push('Too many pods');
  if (res.milliCPU > 0 && res.milliCPU > info.allocCPU - info.requested.milliCPU) {
    reasons.push('Insufficient cpu');
  }
  if (res.memory > 0 && res.memory > info.allocMemory - info.requested.memory) {
    reasons.push('Insufficient memory');
  }
  return reasons.length ? { reasons, unresolvable: false } : undefined;
}
