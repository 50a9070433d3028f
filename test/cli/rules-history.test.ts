// `kdp rules history`: each kept sync with the Service ports it added, changed or removed.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeClusterInfo } from '../../src/cluster/cluster-file.js';
import { writePidFile } from '../../src/cluster/daemon.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { RuleHistory, rulesDir } from '../../src/proxy/history.js';
import { kdp } from '../helpers/cli.js';
import { compileScenario } from '../diff/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kdp rules history', () => {
  it('says what each sync changed, and --changes-only hides the syncs that changed nothing', async () => {
    const paths = dataDirPaths(dir);
    const history = new RuleHistory(rulesDir(dir, 'n1'));
    const add = await compileScenario('17-partial-sync', 'iptables', undefined, '1-add');
    const scale = await compileScenario('17-partial-sync', 'iptables', undefined, '2-scale');
    for (const text of [add, add, scale, add]) {
      history.record({ mode: 'iptables', family: 'IPv4', full: true, text, origins: {} });
    }
    writeClusterInfo(paths, {
      url: 'https://127.0.0.1:1', pid: process.pid, mode: 'virtual', proxyMode: 'iptables',
      nodes: [{ name: 'n1', ip: '172.18.0.2' }], kubeconfig: join(dir, 'kubeconfig'),
      startedAt: new Date().toISOString(), timeScale: 1,
    });
    writePidFile(paths.pidFile);

    const r = await kdp('rules', 'history', '--data-dir', dir);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[1]).toMatch(/CHANGES$/);
    expect(lines[2]).toMatch(/^@1 .* first kept sync \(\d+ Service ports\)$/);
    expect(lines[3]).toMatch(/^@2 .* no change$/);
    expect(lines[4]).toMatch(/^@3 .* ~\S+:http/);
    expect(lines[5]).toMatch(/^@4 .* ~\S+:http/);

    const only = await kdp('rules', 'history', '--changes-only', '--data-dir', dir);
    expect(only.out).not.toMatch(/^@2 /m);
    expect(only.out).toMatch(/^@3 /m);

    const json = JSON.parse((await kdp('rules', 'history', '-o', 'json', '--data-dir', dir)).out) as
      Array<{ seq: number; changes: { changed: string[]; summary: string } }>;
    expect(json[2]!.changes.changed.length).toBeGreaterThan(0);
    expect(json[1]!.changes.summary).toBe('no change');
  });
});
