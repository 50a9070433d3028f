import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeClusterInfo } from '../../src/cluster/cluster-file.js';
import { writePidFile } from '../../src/cluster/daemon.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { RuleHistory, rulesDir } from '../../src/proxy/history.js';
import { kdp } from '../helpers/cli.js';
import { RULES_DIR } from '../helpers/scenarios.js';
import { compileScenario } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const golden = (s: string, m: string) => join(RULES_DIR, s, `${m}.golden`);
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('kdp diff', () => {
  it('exits 0 for the same table and 1 for different ones, as diff does', async () => {
    const same = await kdp('diff', golden('01-clusterip', 'iptables'), golden('01-clusterip', 'iptables'));
    expect(same).toEqual({ code: 0, out: 'no difference\n', err: '' });
    const diff = await kdp('diff', golden('01-clusterip', 'nftables'), golden('04-nodeport', 'nftables'));
    expect(diff.code).toBe(1);
    expect(diff.out).toContain('default/echo:http  + NodePort 30080\n');
  });

  it('-o json gives the semantic changes as data', async () => {
    const r = await kdp('diff', '-o', 'json', golden('17-partial-sync', 'iptables'),
      golden('01-clusterip', 'iptables'));
    const doc = JSON.parse(r.out) as { view: string; changes: { group: string; kind: string; key: string }[] };
    expect(doc.view).toBe('semantic');
    expect(doc.changes).toContainEqual({ group: 'shop/web:http', kind: 'added', key: 'ClusterIP 10.96.0.20:80', after: '' });
  });

  it('--rules prints a unified diff of the normalised rules', async () => {
    const r = await kdp('diff', '--rules', golden('17-partial-sync', 'iptables'), golden('01-clusterip', 'iptables'));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^--- .*17-partial-sync\/iptables\.golden\n\+\+\+ .*01-clusterip/);
    expect(r.out).toContain('\n+-A KUBE-SEP-');
  });

  it('an unparseable line names the file, the line number and the reason (exit 2)', async () => {
    const bad = file('bad.iptables', '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j "oops\nCOMMIT\n');
    const r = await kdp('diff', golden('01-clusterip', 'iptables'), bad);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`error [KDP_PARSE]: ${bad}: iptables line 3: unterminated quote`);
  });

  it('mixing formats without --behaviour is a KDP_DIFF error (exit 2)', async () => {
    const r = await kdp('diff', golden('01-clusterip', 'iptables'), golden('01-clusterip', 'nftables'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/error \[KDP_DIFF\]: .* is iptables and .* is nftables: .*--behaviour/);
  });

  it('--behaviour compares two modes', async () => {
    const r = await kdp('diff', '--behaviour', '--node-ip', '172.18.0.2',
      golden('04-nodeport', 'iptables'), golden('04-nodeport', 'nftables'));
    expect(r).toEqual({ code: 0, err: '', out: 'the tables differ in text but not in behaviour (6 probes)\n' });
  });

  it('a missing file and a bad --format exit 2 as well', async () => {
    expect((await kdp('diff', join(dir, 'nope'), golden('01-clusterip', 'iptables'))).code).toBe(2);
    const r = await kdp('diff', '--format', 'pf', golden('01-clusterip', 'iptables'), golden('01-clusterip', 'iptables'));
    expect(r.code).toBe(2);
  });

  it('--format overrides detection (an ipvs golden read as iptables does not parse)', async () => {
    const r = await kdp('diff', '--format', 'iptables', golden('01-clusterip', 'ipvs'), golden('01-clusterip', 'ipvs'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('KDP_PARSE');
  });

  it('compares kept snapshots of a node, named by the compiler\'s bookkeeping', async () => {
    const data = join(dir, 'data');
    const paths = dataDirPaths(data);
    const history = new RuleHistory(rulesDir(data, 'n1'));
    const before = await compileScenario('17-partial-sync', 'iptables', undefined, '1-add');
    const after = await compileScenario('17-partial-sync', 'iptables', undefined, '2-scale');
    const origins = { 'KUBE-SVC-3SM5JQIORA37DPHO': { servicePort: 'seq/renamed:http' } };
    for (const text of [before, after]) {
      history.record({ mode: 'iptables', family: 'IPv4', full: true, text, origins });
    }
    writeClusterInfo(paths, {
      url: 'https://127.0.0.1:1', pid: process.pid, mode: 'virtual', proxyMode: 'iptables',
      nodes: [{ name: 'n1', ip: '172.18.0.2' }], kubeconfig: join(data, 'kubeconfig'),
      startedAt: new Date().toISOString(), timeScale: 1,
    });
    writePidFile(paths.pidFile);
    const r = await kdp('diff', '--data-dir', data, '--node', 'n1', '@1', '@latest');
    expect(r.code).toBe(1);
    expect(r.out).toContain('seq/renamed:http  + endpoint 10.244.1.3:8080; probability 0.3333333333');
    const b = await kdp('diff', '--behaviour', '--data-dir', data, '@1', '@2');
    expect(b.out).toContain('→ 10.244.1.3:8080 p=0.333333');
    expect(readFileSync(paths.clusterFile, 'utf8')).toContain('n1');
    expect((await kdp('diff', '--data-dir', data, '@1', '@9')).code).toBe(2);
  });
});
