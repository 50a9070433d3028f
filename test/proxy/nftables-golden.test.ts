// Every scenario of rules/ compiles to its nftables.golden byte for byte (the table state as
// `add` lines in upstream's canonical test order), and every step of a partial-sync sequence
// to its nftables.<step>.golden (the exact `nft -f` transaction(s) of that partial sync).
// Goldens are written only with UPDATE_GOLDEN=1 and reviewed like code.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileWith, type BackendModule } from '../../src/proxy/compile.js';
import * as nftables from '../../src/proxy/nftables/proxier.js';
import { compileOptions, goldenPath, listScenarios, loadScenario, runSequence }
  from '../helpers/scenarios.js';

const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** The backend with a frozen clock, so no stale chain ages out between steps. */
const frozen: BackendModule = {
  buildProxier: (config) => nftables.buildProxier(config, { now: () => 0 }),
  canonicalize: nftables.canonicalize,
};

function check(path: string, actual: string): void {
  if (UPDATE) writeFileSync(path, actual);
  expect(existsSync(path), `${path} missing (run with UPDATE_GOLDEN=1)`).toBe(true);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

/** A step's artifacts as one file: transactions separated by a `#` line nft skips. */
function stepText(texts: readonly string[]): string {
  return texts.map((t, i) => (texts.length > 1 ? `# transaction ${i + 1}\n` : '') + t).join('');
}

describe('nftables goldens', () => {
  for (const name of listScenarios()) {
    it(`scenario ${name} compiles to its golden table state`, () => {
      const s = loadScenario(name);
      check(goldenPath(s, 'nftables'), compileWith(nftables, compileOptions(s, 'nftables')));
    });
    const s = loadScenario(name);
    if (s.steps.length === 0) continue;
    it(`scenario ${name} partial syncs match their step transactions`, () => {
      const { results } = runSequence(s, 'nftables', frozen);
      for (const r of results.slice(1)) {
        expect(r.result.full).toBe(false);
        check(goldenPath(s, 'nftables', r.name), stepText(r.result.artifacts.map((a) => a.text)));
      }
    });
  }
});
