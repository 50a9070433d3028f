import { describe, expect, it } from 'vitest';
import type { Deployment, ReplicaSet } from '../../src/api/types.js';
import { newRSNewReplicas, planOldScaleDown } from '../../src/controllers/deployment/rolling.js';
import { resolveFenceposts } from '../../src/controllers/deployment/util.js';
import { computeHash, equalIgnoreHash } from '../../src/controllers/deployment/hash.js';

const dep = (replicas: number, maxSurge?: number | string, maxUnavailable?: number | string):
  Deployment => ({ metadata: { name: 'd' }, spec: { replicas, selector: {}, template: {},
  strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } } } });
const rs = (name: string, replicas: number, available: number, created: string): ReplicaSet =>
  ({ metadata: { name, creationTimestamp: created }, spec: { replicas, selector: {} },
    status: { replicas, availableReplicas: available } });

describe('rolling update arithmetic', () => {
  it('resolves percentages: surge rounds up, unavailable rounds down (25% of 10 → 3 and 2)', () => {
    expect(resolveFenceposts(dep(10))).toEqual([3, 2]);
    expect(resolveFenceposts(dep(3, 0, 0))).toEqual([0, 1]);
    expect(resolveFenceposts(dep(4, '50%', 1))).toEqual([2, 1]);
  });

  it('scales the new ReplicaSet up to replicas + maxSurge pods in total', () => {
    const d = dep(10, 3, 2);
    const old = rs('old', 10, 10, '2024-01-01T00:00:00Z');
    const fresh = rs('new', 0, 0, '2024-01-02T00:00:00Z');
    expect(newRSNewReplicas(d, [old, fresh], fresh)).toBe(3);
    expect(newRSNewReplicas(d, [rs('old', 10, 10, 'x'), rs('new', 3, 0, 'y')],
      rs('new', 3, 0, 'y'))).toBe(3); // at the surge limit: wait
  });

  it('scales old ReplicaSets down only as far as maxUnavailable allows', () => {
    const d = dep(10, 3, 2);
    const old = rs('old', 10, 10, '2024-01-01T00:00:00Z');
    const fresh = rs('new', 3, 0, '2024-01-02T00:00:00Z');
    // 13 pods, min available 8, 3 new ones not yet available: 13 - 8 - 3 = 2 may go.
    expect(planOldScaleDown(d, [old, fresh], [old], fresh)).toEqual(new Map([['old', 8]]));
    const ready = rs('new', 3, 3, '2024-01-02T00:00:00Z');
    expect(planOldScaleDown(d, [old, ready], [old], ready)).toEqual(new Map([['old', 5]]));
  });

  it('removes unhealthy old replicas first, within the scale-down budget', () => {
    const d = dep(4, 1, 0);
    const old = rs('old', 4, 2, '2024-01-01T00:00:00Z'); // 2 of 4 unavailable
    const fresh = rs('new', 1, 1, '2024-01-02T00:00:00Z');
    // 5 pods, 4 must stay available: one may go, and it is an unhealthy one; the healthy pass
    // finds 3 available < 4 and removes nothing more.
    expect(planOldScaleDown(d, [old, fresh], [old], fresh)).toEqual(new Map([['old', 3]]));
    const wide = dep(4, 1, 2);
    expect(planOldScaleDown(wide, [old, fresh], [old], fresh)).toEqual(new Map([['old', 1]]));
  });
});

describe('pod-template-hash', () => {
  it('is stable, changes with the template and the collision count, and uses the safe alphabet', () => {
    const t = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } };
    const h = computeHash(t);
    expect(h).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{6,10}$/);
    expect(computeHash(structuredClone(t))).toBe(h);
    expect(computeHash({ ...t, spec: { containers: [{ name: 'c', image: 'x:2' }] } })).not.toBe(h);
    expect(computeHash(t, 1)).not.toBe(h);
    expect(equalIgnoreHash(t, { metadata: { labels: { app: 'a', 'pod-template-hash': h } },
      spec: t.spec })).toBe(true);
  });
});
