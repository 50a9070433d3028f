import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RuleHistory, rulesDir } from '../../src/proxy/history.js';
import {
  buildSyncFeed, nodeRulesDir, ruleDiff, ruleHistory, ruleNodes, ruleSnapshot, syncSummary,
  type SyncSummary,
} from '../../src/ui/server/rules-data.js';

const golden = (s: string) => readFileSync(fileURLToPath(
  new URL(`../../rules/${s}/iptables.golden`, import.meta.url)), 'utf8');

function history() {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-ui-rules-'));
  const h = new RuleHistory(rulesDir(dir, 'n1'));
  return { dir, h };
}

describe('web UI rule data (what kdp rules, rules history and diff --node read)', () => {
  it('lists a node\'s syncs and summarises the last one from file names alone', () => {
    const { dir, h } = history();
    h.record({ mode: 'iptables', family: 'IPv4', full: true, text: golden('01-clusterip'), origins: {} });
    h.record({ mode: 'iptables', family: 'IPv4', full: false, text: golden('04-nodeport'), origins: {} });
    expect(ruleNodes(dir)).toEqual(['n1']);
    expect(ruleHistory(dir, 'n1').snapshots.map((s) => s.seq)).toEqual([1, 2]);
    const s = syncSummary(dir, 'n1', 'iptables');
    expect(s).toMatchObject({ node: 'n1', mode: 'iptables', syncs: [{ family: 'IPv4', seq: 2 }] });
    expect(ruleSnapshot(dir, 'n1', '1').seq).toBe(1);
    expect(ruleSnapshot(dir, 'n1').seq).toBe(2);
  });

  it('diffs two syncs as kdp diff --node does, by Service and by rules', () => {
    const { dir, h } = history();
    h.record({ mode: 'iptables', family: 'IPv4', full: true, text: golden('01-clusterip'), origins: {} });
    h.record({ mode: 'iptables', family: 'IPv4', full: true, text: golden('04-nodeport'), origins: {} });
    const d = ruleDiff(dir, 'n1', '1', 'latest') as { semantic: { changes: unknown[] };
      rules: { diff: string[] }; a: string; b: string };
    expect(d.a).toBe('node n1 @1');
    expect(d.b).toBe('node n1 @2');
    expect(d.semantic.changes.length).toBeGreaterThan(0);
    expect(d.rules.diff.some((l) => l.startsWith('+'))).toBe(true);
  });

  it('refuses what is not a node name or a sync reference, naming the field', () => {
    const { dir } = history();
    expect(() => nodeRulesDir(dir, '../etc')).toThrow(/node: "\.\.\/etc" is not a node name/);
    expect(() => nodeRulesDir(dir, 'n9')).toThrow(/n9 has no kube-proxy rules/);
    expect(() => ruleSnapshot(dir, 'n1', 'x;y')).toThrow(/seq: "x;y"/);
    expect(() => ruleDiff(dir, 'n1', '1', '2', 'IPv5')).toThrow(/family: "IPv5"/);
  });

  it('tells subscribers when a node syncs (file system notifications, no polling)', async () => {
    const { dir, h } = history();
    const feed = buildSyncFeed(dir, 5);
    const seen: SyncSummary[] = [];
    const got = new Promise<void>((resolve) => {
      const stop = feed.subscribe((s) => {
        seen.push(s);
        if (s.syncs.some((x) => x.seq === 1)) { stop(); resolve(); }
      });
    });
    h.record({ mode: 'iptables', family: 'IPv4', full: true, text: golden('01-clusterip'), origins: {} });
    await got;
    expect(seen.at(-1)!.node).toBe('n1');
  });
});
