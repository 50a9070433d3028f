// Root: the tables checkRuleText refuses are refused by the real tools too, inside a namespace
// this test creates (never the host's tables): `iptables-restore --test` / `nft -c -f` where
// the tools check, a real apply where only the kernel finds it (jump loops: ELOOP;
// iptables-nft's chain lookups). And goldens both accept are accepted by both.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileOffline } from '../../src/proxy/compile.js';
import { checkRuleText } from '../../src/proxy/registry.js';
import { compileOptions, loadScenario } from '../helpers/scenarios.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { REFUSED_IPTABLES, REFUSED_NFT, type RefusedTable } from './fixtures/refused-tables.js';

const ok = canUseNetns(['ip', 'iptables-restore', 'nft']);
const ns = testNetnsName();
const dir = mkdtempSync(join(tmpdir(), 'kdp-check-'));

/** Exit status of a tool run in the test's namespace. */
function inNs(args: string[], input?: string): { status: number; stderr: string } {
  const r = spawnSync('ip', ['netns', 'exec', ns, ...args], { input, encoding: 'utf8' });
  return { status: r.status ?? -1, stderr: r.stderr };
}

function iptablesRestore(c: RefusedTable): number {
  const r = inNs(['iptables-restore', ...(c.kernel === 'check' ? ['--test'] : [])], c.text);
  return r.status;
}

function nft(c: RefusedTable): number {
  const file = join(dir, 'case.nft');
  writeFileSync(file, c.text);
  const r = inNs(['nft', ...(c.kernel === 'check' ? ['-c'] : []), '-f', file]);
  inNs(['nft', 'flush', 'ruleset']);
  return r.status;
}

describe.runIf(ok)('the real tools refuse what checkRuleText refuses (netns)', () => {
  beforeAll(() => { execFileSync('ip', ['netns', 'add', ns]); });
  afterAll(() => { spawnSync('ip', ['netns', 'del', ns]); });

  it.each(REFUSED_IPTABLES.map((c) => [c.name, c] as const))('iptables-restore: %s', (_n, c) => {
    expect(() => checkRuleText('iptables', c.text)).toThrow(c.message);
    expect(iptablesRestore(c)).not.toBe(0);
  });

  it.each(REFUSED_NFT.map((c) => [c.name, c] as const))('nft: %s', (_n, c) => {
    expect(() => checkRuleText('nftables', c.text)).toThrow(c.message);
    expect(nft(c)).not.toBe(0);
  });

  it.each(['01-clusterip', '04-nodeport', '10-session-affinity'])(
    'both accept what kube-proxy would apply for %s', async (s) => {
      const scenario = loadScenario(s);
      for (const format of ['iptables', 'nftables'] as const) {
        const text = await compileOffline(compileOptions(scenario, format, false));
        expect(() => checkRuleText(format, text)).not.toThrow();
        const c: RefusedTable = { name: s, text, message: /./, kernel: 'check' };
        expect(format === 'iptables' ? iptablesRestore(c) : nft(c), `${s} ${format}`).toBe(0);
      }
    });
});
