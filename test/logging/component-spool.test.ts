// Component logs of processes other than the store's writer: each writes its own spool file
// (component-spool.ts), the tailer reads it into the store as that component's lines, removes
// it once its writer has exited and it was read to its end, and reads etcd's zap log; a
// component command's standard error is its spool (cli/component-journal.ts).

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { journalIO } from '../../src/cli/component-journal.js';
import type { CliIO } from '../../src/cli/command.js';
import { nodeAgentCommand, schedulerCommand } from '../../src/cli/commands/components.js';
import { nodeJoinCommand } from '../../src/cli/commands/node-join.js';
import { buildContainerTailer } from '../../src/logging/container-tailer.js';
import { buildZapLines } from '../../src/logging/cri-lines.js';
import {
  componentLog, componentLogDirs, componentOfDir, ROTATE_BYTES,
} from '../../src/logging/component-spool.js';
import type { LogRecord } from '../../src/logging/record.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'kdp-spool-'));
  dirs.push(d);
  return d;
};

function tail(dataDir: string, alive: (pid: number) => boolean) {
  const got: LogRecord[] = [];
  const tailer = buildContainerTailer({
    roots: () => [], labelsOf: () => undefined, sink: (r) => got.push(r), alive,
    components: () => [...componentLogDirs(dataDir).map((c) => ({ ...c, format: 'cri' as const, reap: true })),
      { dir: join(dataDir, 'etcd'), source: { kind: 'component', component: 'etcd' }, format: 'zap' }],
  });
  return { got, tailer };
}

describe('component spool files', () => {
  it('names a directory per component and node, and refuses other names', () => {
    expect(componentOfDir('kubelet.n1')).toEqual({ kind: 'component', component: 'kubelet', node: 'n1' });
    expect(componentOfDir('kube-proxy.w1.lab.example')).toEqual({ kind: 'component', component: 'kube-proxy', node: 'w1.lab.example' });
    expect(componentOfDir('apiserver')).toEqual({ kind: 'component', component: 'apiserver' });
    expect(componentOfDir('sshd')).toBeUndefined();
    expect(componentOfDir('kubelet.N1/..')).toBeUndefined();
  });

  it('a process\'s lines reach the tailer as its component\'s, in order, one record per line', () => {
    const d = tmp();
    const log = componentLog(d, 'kubelet', 'n1', 4242);
    log.line('"Starting kubelet"');
    log.line('two\nthree\n');
    const { got, tailer } = tail(d, () => true);
    tailer.poll();
    expect(got.map((r) => [r.source, r.stream, r.message])).toEqual([
      [{ kind: 'component', component: 'kubelet', node: 'n1' }, 'stderr', '"Starting kubelet"'],
      [{ kind: 'component', component: 'kubelet', node: 'n1' }, 'stderr', 'two'],
      [{ kind: 'component', component: 'kubelet', node: 'n1' }, 'stderr', 'three'],
    ]);
    expect(Math.abs(got[0]!.time - Date.now())).toBeLessThan(5000);
    log.line('four');
    tailer.poll();
    expect(got.map((r) => r.message).slice(3)).toEqual(['four']);
    log.close();
  });

  it('an exited writer\'s file is removed once read to its end; a live one\'s stays', () => {
    const d = tmp();
    const dead = componentLog(d, 'apiserver', undefined, 1111);
    const live = componentLog(d, 'apiserver', undefined, 2222);
    dead.line('from the replica that exited');
    live.line('from the running one');
    dead.close();
    live.close();
    const { got, tailer } = tail(d, (pid) => pid === 2222);
    tailer.poll(); // read
    tailer.poll(); // nothing new: reaped
    const dir = join(d, 'component-logs', 'apiserver');
    expect(readdirSync(dir).sort()).toEqual(['2222.log']);
    expect(got.map((r) => r.message).sort()).toEqual(['from the replica that exited', 'from the running one']);
  });

  it('rotates past its bound, and the tailer reads the rotated file before the new one', () => {
    const d = tmp();
    const { got, tailer } = tail(d, () => true);
    const log = componentLog(d, 'scheduler', undefined, 3333);
    const big = 'x'.repeat(200 * 1024); // 42 lines pass the 8 MiB bound
    for (let i = 0; i < 30; i++) log.line(`${i % 10} ${big}`);
    tailer.poll();
    for (let i = 30; i < 45; i++) log.line(`${i % 10} ${big}`);
    log.line('after rotation');
    tailer.poll();
    const names = readdirSync(join(d, 'component-logs', 'scheduler')).sort();
    expect(names).toHaveLength(2);
    expect(names[1]).toMatch(/^3333\.log\.\d{8}-\d{6}$/);
    expect(got.map((r) => r.message.slice(0, 2))).toEqual([...Array.from({ length: 45 }, (_, i) => `${i % 10} `), 'af']);
    expect(ROTATE_BYTES).toBeLessThan(9 * 1024 * 1024);
    log.close();
  });

  it('reads etcd\'s zap log with its own times', () => {
    const d = tmp();
    mkdirSync(join(d, 'etcd'));
    const line = '{"level":"info","ts":"2026-12-04T07:00:01.250000Z","caller":"etcdserver/server.go:2068","msg":"published local member"}';
    writeFileSync(join(d, 'etcd', 'etcd-0.log'), `${line}\n`);
    writeFileSync(join(d, 'etcd', 'cluster.json'), '{}\n');
    const { got, tailer } = tail(d, () => true);
    tailer.poll();
    expect(got).toEqual([{ time: Date.parse('2026-12-04T07:00:01.25Z'), stream: 'stderr', message: line,
      source: { kind: 'component', component: 'etcd' } }]);
    expect(buildZapLines().push('not json', 7)).toEqual({ time: 7, stream: 'stderr', message: 'not json' });
  });
});

describe('a component command\'s standard error is its log', () => {
  const io = (): CliIO & { text: string[] } => {
    const text: string[] = [];
    return { text, out: () => {}, err: (t) => { text.push(t); }, env: {}, isTTY: false, interrupted: new Promise(() => {}) };
  };

  it('kdp node: kube-proxy\'s lines are kube-proxy\'s, the rest the kubelet\'s, on that node', () => {
    const d = tmp();
    const base = io();
    const j = journalIO(nodeAgentCommand, { name: 'n7', 'data-dir': d }, base);
    j.err('kdp node n7: kube-proxy n7: sysctl net.ipv4.conf.all.route_localnet: read-only\nkdp node n7 (172.18.0.9) run');
    j.err('ning: kubelet\n');
    expect(base.text.join('')).toContain('kube-proxy n7: sysctl'); // still printed
    const read = (sub: string) => readFileSync(join(d, 'component-logs', sub, `${process.pid}.log`), 'utf8');
    expect(read('kube-proxy.n7')).toMatch(/^\S+Z stderr F sysctl net\.ipv4\.conf\.all\.route_localnet: read-only\n$/);
    expect(read('kubelet.n7')).toMatch(/^\S+Z stderr F kdp node n7 \(172\.18\.0\.9\) running: kubelet\n$/);
    componentLog(d, 'kubelet', 'n7').close();
    componentLog(d, 'kube-proxy', 'n7').close();
  });

  it('kdp node join: the joining node\'s kubelet, its own prefix taken off', () => {
    const d = tmp();
    const j = journalIO(nodeJoinCommand, { name: 'j1', 'data-dir': d }, io());
    j.err('kdp node join j1: credentials in /x/kubeconfig (12 ms)\nkdp node j1: kube-proxy j1: started\n');
    const read = (sub: string) => readFileSync(join(d, 'component-logs', sub, `${process.pid}.log`), 'utf8');
    expect(read('kubelet.j1')).toMatch(/^\S+Z stderr F credentials in \/x\/kubeconfig \(12 ms\)\n$/);
    expect(read('kube-proxy.j1')).toMatch(/^\S+Z stderr F started\n$/);
    componentLog(d, 'kubelet', 'j1').close();
    componentLog(d, 'kube-proxy', 'j1').close();
  });

  it('writes nothing before the data dir exists, and leaves other commands alone', () => {
    const d = join(tmp(), 'not-yet');
    const j = journalIO(schedulerCommand, { 'data-dir': d }, io());
    j.err('error: refused\n');
    expect(existsSync(d)).toBe(false);
    const plain = io();
    expect(journalIO({ ...schedulerCommand, name: 'logs' }, { 'data-dir': d }, plain)).toBe(plain);
  });
});
