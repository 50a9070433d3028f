// Default scoring: NodeResourcesFit with the LeastAllocated strategy plus
// NodeResourcesBalancedAllocation, over cpu and memory (weight 1 each), integer arithmetic as
// upstream. Both use the non-zero requests (defaults for containers that request nothing).

import type { NodeInfo, PodResources } from './node-info.js';

const MAX_SCORE = 100;

function leastAllocated(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.floor(((capacity - requested) * MAX_SCORE) / capacity);
}

export function scoreNode(res: PodResources, info: NodeInfo): number {
  const cpuReq = info.requested.nonZeroCPU + res.nonZeroCPU;
  const memReq = info.requested.nonZeroMemory + res.nonZeroMemory;
  const least = Math.floor(
    (leastAllocated(cpuReq, info.allocCPU) + leastAllocated(memReq, info.allocMemory)) / 2);
  const fc = info.allocCPU ? Math.min(1, cpuReq / info.allocCPU) : 1;
  const fm = info.allocMemory ? Math.min(1, memReq / info.allocMemory) : 1;
  const std = Math.abs(fc - fm) / 2;
  const balanced = Math.floor((1 - std) * MAX_SCORE);
  return least + balanced;
}

/** Upstream's adaptive percentageOfNodesToScore: how many feasible nodes to look for. */
export function numFeasibleNodesToFind(numAllNodes: number, percentage = 0): number {
  const minFeasible = 100;
  if (numAllNodes < minFeasible) return numAllNodes;
  let pct = percentage;
  if (pct <= 0) pct = Math.max(5, 50 - Math.floor(numAllNodes / 125));
  if (pct >= 100) return numAllNodes;
  return Math.max(minFeasible, Math.floor((numAllNodes * pct) / 100));
}
