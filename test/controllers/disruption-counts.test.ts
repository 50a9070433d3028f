// The disruption controller's arithmetic, as upstream's getExpectedPodCount/updatePdbStatus:
// percentages round up, maxUnavailable counts from the controllers' scale, no expected pods
// allow no disruption, and the policy/v1 selector rules.

import { describe, expect, it } from 'vitest';
import { matchesPod } from '../../src/api/pdb.js';
import type { Pod } from '../../src/api/types.js';
import { validatePodDisruptionBudget } from '../../src/api/validation/pdb.js';
import { budgetCounts, scaledValue } from '../../src/controllers/disruption/controller.js';

const pods = (n: number) => Array.from({ length: n }, (_, i) =>
  ({ metadata: { name: `p${i}`, namespace: 'd', labels: { app: 'a' } } }) as Pod);

describe('disruption budgets', () => {
  it('scaled values round as upstream', () => {
    expect(scaledValue('34%', 3, true)).toBe(2);
    expect(scaledValue('34%', 3, false)).toBe(1);
    expect(scaledValue(2, 10, true)).toBe(2);
  });

  it('minAvailable as a number counts the pods found; a percentage and maxUnavailable the scale', () => {
    expect(budgetCounts({ minAvailable: 2 }, pods(3), 3, () => 99)).toEqual(
      { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    expect(budgetCounts({ minAvailable: '50%' }, pods(3), 3, () => 4)).toEqual(
      { expectedPods: 4, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    expect(budgetCounts({ maxUnavailable: 1 }, pods(3), 2, () => 3)).toEqual(
      { expectedPods: 3, desiredHealthy: 2, currentHealthy: 2, disruptionsAllowed: 0 });
    expect(budgetCounts({ maxUnavailable: 1 }, [], 0, () => 0).disruptionsAllowed).toBe(0);
  });

  it('policy/v1 selectors: empty selects the namespace, absent selects nothing', () => {
    const p = pods(1)[0]!;
    const pdb = (selector: unknown) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget',
      metadata: { name: 'b', namespace: 'd' }, spec: { selector } }) as never;
    expect(matchesPod(pdb({}), p)).toBe(true);
    expect(matchesPod(pdb(undefined), p)).toBe(false);
    expect(matchesPod(pdb({ matchLabels: { app: 'b' } }), p)).toBe(false);
  });

  it('validation: both set, not a percentage, an unknown eviction policy', () => {
    const v = (spec: Record<string, unknown>) => validatePodDisruptionBudget({ apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget', metadata: { name: 'b', namespace: 'd' }, spec } as never)
      .map((c) => `${c.field}: ${c.message}`);
    expect(v({ minAvailable: 1, maxUnavailable: 1 })[0]).toMatch(/^spec: .*minAvailable and maxUnavailable cannot be both set$/);
    expect(v({ minAvailable: 'x' })).toEqual(["spec.minAvailable: Invalid value: \"x\": must be an integer or percentage (e.g '5%')"]);
    expect(v({ unhealthyPodEvictionPolicy: 'Never' })).toEqual(
      ['spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"']);
  });
});
