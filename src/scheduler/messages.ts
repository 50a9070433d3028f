// The FailedScheduling message, as upstream's FitError.Error(): a histogram of filter reasons
// sorted as strings, then the preemption post-filter's own histogram.

import type { FilterFailure } from './filters.js';

export function fitErrorMessage(numAllNodes: number, failures: readonly FilterFailure[]): string {
  const hist = new Map<string, number>();
  const pre = new Map<string, number>();
  for (const f of failures) {
    for (const r of f.reasons) hist.set(r, (hist.get(r) ?? 0) + 1);
    const p = f.unresolvable ? 'Preemption is not helpful for scheduling'
      : 'No preemption victims found for incoming pod';
    pre.set(p, (pre.get(p) ?? 0) + 1);
  }
  const render = (m: Map<string, number>) =>
    [...m].map(([r, n]) => `${n} ${r}`).sort().join(', ');
  return `0/${numAllNodes} nodes are available: ${render(hist)}. ` +
    `preemption: 0/${numAllNodes} nodes are available: ${render(pre)}.`;
}

export const NO_NODES_MESSAGE = 'no nodes available to schedule pods';
