// `kdp status` and `kdp rules` show a node whose kube-proxy could not apply its last sync as
// failed (RULES column, failure count, last error per family; a warning before the rules), from
// the apply.json kube-proxy keeps next to its rule history, and stop once an apply succeeds.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesState } from '../../src/cli/commands/status.js';
import { dataDirPaths, type DataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { readApplyStatus, RuleHistory, rulesDir, type ApplyStatus }
  from '../../src/proxy/history.js';
import { waitFor } from '../helpers/cluster.js';
import { kdp } from '../helpers/cli.js';

const failing: ApplyStatus = {
  family: 'IPv4', failed: true, failures: 3, since: '2026-01-02T03:04:05.000Z',
  lastError: { time: '2026-01-02T03:04:09.000Z', message: '[netns kdp-x-n1] iptables-restore ' +
    '-w 5 --noflush --counters failed (2): iptables-restore v1.8.9 (nf_tables): unknown ' +
    'option "--seconds"\nError occurred at line: 12' },
};

describe('the RULES column', () => {
  it('says FAILED per failing family before anything else, with the count in a row', () => {
    const drift = [{ family: 'IPv4' as const, checkedAt: 't', inSync: true, drifts: 0 }];
    expect(rulesState(drift, [failing])).toBe('FAILED IPv4 (3 in a row)');
    expect(rulesState(drift, [{ ...failing, failed: false, failures: 0 }])).toBe('in sync');
    expect(rulesState([], [{ ...failing, failed: false, failures: 0 }])).toBe('applied');
    expect(rulesState([], [])).toBe('-');
  });
});

describe('kdp status and kdp rules on a cluster whose node failed to apply', () => {
  let paths: DataDirPaths;
  let cluster: RunningCluster;
  let dir: string;

  beforeAll(async () => {
    paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-apply-status-')));
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 5,
      dataPlane: 'virtual', progress: () => {} });
    dir = rulesDir(paths.root, 'n1');
    await waitFor(() => readApplyStatus(dir)[0]?.failed === false, 30_000, 'a first apply');
  }, 60_000);

  afterAll(async () => {
    await cluster?.close();
  }, 30_000);

  it('shows a good apply as applied, and no warning', async () => {
    const s = await kdp('status', '--data-dir', paths.root);
    expect(s.code, s.err).toBe(0);
    expect(s.out).toMatch(/^n1 .* applied$/m);
    const r = await kdp('rules', '--data-dir', paths.root, '--node', 'n1');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
  });

  it('shows a failing apply: RULES FAILED, the last error; kdp rules warns', async () => {
    // What kube-proxy records after failed applies (it writes apply.json on every change).
    new RuleHistory(dir).recordApply([failing]);
    const s = await kdp('status', '--data-dir', paths.root);
    expect(s.code, s.err).toBe(0);
    expect(s.out).toMatch(/^n1 .* FAILED IPv4 \(3 in a row\)$/m);
    expect(s.out).toContain('      IPv4 apply failing since 2026-01-02T03:04:05.000Z: ' +
      '[netns kdp-x-n1] iptables-restore -w 5 --noflush --counters failed (2): iptables-restore ' +
      'v1.8.9 (nf_tables): unknown option "--seconds" / Error occurred at line: 12\n');
    const j = JSON.parse((await kdp('status', '--data-dir', paths.root, '-o', 'json')).out);
    expect(j.nodeStatus[0].ruleApply).toEqual([failing]);

    const r = await kdp('rules', '--data-dir', paths.root, '--node', 'n1');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('warning: node n1\'s kube-proxy could not apply its IPv4 rules (3 ' +
      'failures in a row since 2026-01-02T03:04:05.000Z; the node keeps the rules of the last ' +
      'good apply):\n  [netns kdp-x-n1] iptables-restore -w 5 --noflush --counters failed (2): ' +
      'iptables-restore v1.8.9 (nf_tables): unknown option "--seconds" / Error occurred at ' +
      'line: 12\n');
    expect(r.out).toContain('*nat');
  });

  it('shows nothing failed once an apply succeeded again', async () => {
    new RuleHistory(dir).recordApply([{ ...failing, failed: false, failures: 0 }]);
    const s = await kdp('status', '--data-dir', paths.root);
    expect(s.out).toMatch(/^n1 .* applied$/m);
    expect(s.out).not.toContain('failing');
    expect((await kdp('rules', '--data-dir', paths.root, '--node', 'n1')).err).toBe('');
  });
});
