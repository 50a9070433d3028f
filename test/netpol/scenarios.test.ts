import { describe, expect, it } from 'vitest';
import type { Namespace, Pod } from '../../src/api/types.js';
import { buildModel } from '../../src/netpol/model.js';
import { reachabilityMatrix } from '../../src/netpol/matrix.js';
import { Reachability, summarize } from '../../src/netpol/truth-table.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';
import { NAMESPACES, NODE_IPS, namespace, pod } from './scenarios/cluster.js';
import type { Scenario } from './scenarios/builders.js';
import { KDP_SCENARIOS, UPSTREAM_SCENARIOS } from './scenarios/upstream-e2e.js';

const key = (p: NetworkPolicy): string => `${p.metadata.namespace}/${p.metadata.name}`;

/** Runs every step; returns one failure text per check whose matrix differs. */
function run(s: Scenario): { checks: number; failures: string[] } {
  const nsLabels = new Map<string, Record<string, string>>();
  const podLabels = new Map<string, Record<string, string>>();
  let policies: NetworkPolicy[] = [];
  const failures: string[] = [];
  let checks = 0;
  s.steps.forEach((step, i) => {
    for (const d of step.delete ?? []) {
      policies = d === '*' ? [] : policies.filter((p) => key(p) !== d);
    }
    for (const p of step.apply ?? []) {
      const at = policies.findIndex((q) => key(q) === key(p));
      if (at >= 0) policies[at] = p; else policies.push(p);
    }
    for (const [k, v] of Object.entries(step.podLabels ?? {})) podLabels.set(k, v);
    for (const [k, v] of Object.entries(step.namespaceLabels ?? {})) nsLabels.set(k, v);
    const pods: Pod[] = s.pods.map((k) => pod(k, podLabels.get(k)));
    const namespaces: Namespace[] = NAMESPACES.map((n) => {
      const ns = namespace(n);
      if (nsLabels.has(n)) ns.metadata.labels = nsLabels.get(n);
      return ns;
    });
    const m = buildModel({ pods, namespaces, policies, nodeIPs: NODE_IPS });
    for (const c of step.checks) {
      checks++;
      const r = new Reachability(s.pods, true);
      c.expect(r);
      const observed = reachabilityMatrix(m, c.port, c.protocol).table;
      const sum = summarize(r.expected, observed);
      if (sum.incorrect > 0) {
        failures.push(`step ${i} ${c.protocol}/${c.port}: ${sum.line}\nexpected:\n`
          + `${r.expected.prettyPrint()}\nobserved:\n${observed.prettyPrint()}\ncomparison:\n`
          + sum.comparison.prettyPrint());
      }
    }
  });
  return { checks, failures };
}

describe('the upstream netpol e2e scenarios, evaluated offline', () => {
  it('are all transcribed (at least 40, each with a check)', () => {
    expect(UPSTREAM_SCENARIOS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(UPSTREAM_SCENARIOS.map((s) => s.name)).size).toBe(UPSTREAM_SCENARIOS.length);
  });
  for (const s of [...UPSTREAM_SCENARIOS, ...KDP_SCENARIOS]) {
    it(s.name, () => {
      const { checks, failures } = run(s);
      expect(checks).toBeGreaterThan(0);
      expect(failures.join('\n\n')).toBe('');
    });
  }
});
