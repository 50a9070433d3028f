// Every scenario of rules/ compiled in ipvs mode equals its ipvs.golden byte for byte (and each
// step of a step scenario its ipvs.<step>.golden: ipvs has no partial sync, so a step golden is
// the whole state after that step). `UPDATE_GOLDEN=1` rewrites the files instead; review the diff.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileWith } from '../../src/proxy/compile.js';
import * as ipvs from '../../src/proxy/ipvs/proxier.js';
import { parse as parseIptables } from '../../src/ruleset/iptables/parse.js';
import { format as formatIptables } from '../../src/ruleset/iptables/format.js';
import { formatIpvsState, parseIpvsState, splitFamilies } from '../../src/ruleset/ipvs/index.js';
import {
  compileOptions, goldenPath, listScenarios, loadScenario, runSequence,
} from '../helpers/scenarios.js';

const update = process.env.UPDATE_GOLDEN === '1';

function check(path: string, actual: string): void {
  if (update) {
    writeFileSync(path, actual);
    return;
  }
  expect(existsSync(path), `${path} missing (run with UPDATE_GOLDEN=1)`).toBe(true);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

function parsesBack(text: string): void {
  for (const part of splitFamilies(text)) {
    const state = parseIpvsState(part.text);
    expect(formatIpvsState(state)).toBe(part.text);
    expect(formatIptables(parseIptables(state.iptables))).toBe(state.iptables);
  }
}

describe('ipvs goldens', () => {
  for (const name of listScenarios()) {
    const s = loadScenario(name);
    it(`${name}: full sync equals ipvs.golden and parses back`, () => {
      const text = compileWith(ipvs, compileOptions(s, 'ipvs'));
      check(goldenPath(s, 'ipvs'), text);
      parsesBack(text);
    });
    if (s.steps.length === 0) continue;
    it(`${name}: the state after each step equals ipvs.<step>.golden`, () => {
      const { results } = runSequence(s, 'ipvs', ipvs);
      for (const { name: step, result } of results.slice(1)) {
        const text = result.artifacts.map(ipvs.canonicalize).join('');
        check(goldenPath(s, 'ipvs', step), text);
        parsesBack(text);
      }
    });
  }
});
