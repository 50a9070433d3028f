// Every scenario of rules/ compiles to its iptables.golden byte for byte (canonical order), and
// every step of a partial-sync sequence to its iptables.<step>.golden. Goldens are written only
// with UPDATE_GOLDEN=1 and reviewed like code.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as iptables from '../../src/proxy/iptables/proxier.js';
import { compileWith } from '../../src/proxy/compile.js';
import { compileOptions, goldenPath, listScenarios, loadScenario, runSequence }
  from '../helpers/scenarios.js';

const UPDATE = process.env.UPDATE_GOLDEN === '1';

function check(path: string, actual: string): void {
  if (UPDATE) writeFileSync(path, actual);
  expect(existsSync(path), `${path} missing (run with UPDATE_GOLDEN=1)`).toBe(true);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

describe('iptables goldens', () => {
  for (const name of listScenarios()) {
    it(`scenario ${name} compiles to its golden restore input`, () => {
      const s = loadScenario(name);
      check(goldenPath(s, 'iptables'), compileWith(iptables, compileOptions(s, 'iptables')));
    });
    const s = loadScenario(name);
    if (s.steps.length === 0) continue;
    it(`scenario ${name} partial syncs match their step goldens`, () => {
      const { results } = runSequence(s, 'iptables', iptables);
      for (const r of results.slice(1)) {
        expect(r.result.full).toBe(false);
        check(goldenPath(s, 'iptables', r.name), iptables.canonicalize(r.result.artifacts[0]!));
      }
    });
  }
});
