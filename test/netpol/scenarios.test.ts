import { describe, expect, it } from 'vitest';
import { reachabilityMatrix } from '../../src/netpol/matrix.js';
import { Reachability, summarize } from '../../src/netpol/truth-table.js';
import { playScenario } from './scenarios/run.js';
import type { Scenario } from './scenarios/builders.js';
import { KDP_SCENARIOS, UPSTREAM_SCENARIOS } from './scenarios/upstream-e2e.js';

/** Runs every step; returns one failure text per check whose matrix differs. */
function run(s: Scenario): { checks: number; failures: string[] } {
  const failures: string[] = [];
  let checks = 0;
  for (const { step, check: c, model: m } of playScenario(s)) {
    checks++;
    const r = new Reachability(s.pods, true);
    c.expect(r);
    const observed = reachabilityMatrix(m, c.port, c.protocol).table;
    const sum = summarize(r.expected, observed);
    if (sum.incorrect > 0) {
      failures.push(`step ${step} ${c.protocol}/${c.port}: ${sum.line}\nexpected:\n`
        + `${r.expected.prettyPrint()}\nobserved:\n${observed.prettyPrint()}\ncomparison:\n`
        + sum.comparison.prettyPrint());
    }
  }
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
