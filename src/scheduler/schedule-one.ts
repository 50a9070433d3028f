// Choosing a node for one pod (upstream schedule_one.go): filter nodes round-robin from where the
// last pod stopped until enough are feasible (findNodesThatFit), then score them and break ties
// with the seeded RNG (selectHost).

import { runFilters, type FilterFailure, type PodFacts } from './filters.js';
import type { NodeInfo } from './node-info.js';
import type { Rng } from './rng.js';
import { scoreNode } from './scores.js';

export interface FitResult {
  readonly feasible: readonly NodeInfo[];
  readonly failures: readonly FilterFailure[];
  /** Where the next pod starts trying nodes. */
  readonly nextStart: number;
}

/** Up to `want` feasible nodes, trying `order` from `start`; the failures of the others. */
export function findNodesThatFit(
  facts: PodFacts, order: readonly NodeInfo[], want: number, start: number,
): FitResult {
  const feasible: NodeInfo[] = [];
  const failures: FilterFailure[] = [];
  const n = order.length;
  let i = 0;
  for (; i < n && feasible.length < want; i++) {
    const info = order[(start + i) % n]!;
    const f = runFilters(facts, info);
    if (f) failures.push(f); else feasible.push(info);
  }
  return { feasible, failures, nextStart: (start + i) % n };
}

/** The best-scoring feasible node (non-empty list); ties by reservoir sampling with `rng`. */
export function selectHost(facts: PodFacts, feasible: readonly NodeInfo[], rng: Rng): NodeInfo {
  let best = feasible[0]!;
  let bestScore = -1;
  let ties = 0;
  for (const info of feasible) {
    const s = scoreNode(facts.res, info);
    if (s > bestScore) { best = info; bestScore = s; ties = 1; }
    else if (s === bestScore && rng() * ++ties < 1) best = info;
  }
  return best;
}
