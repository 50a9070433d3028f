import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { logStoreDir } from '../../src/logging/collector.js';
import { openLogWriter, type LogWriter } from '../../src/logging/log-writer.js';
import type { ContainerSource, LogSource } from '../../src/logging/record.js';
import { captureIO, kdp } from '../helpers/cli.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const pod = (ns: string, name: string, app: string, node = 'n1'): LogSource => ({ kind: 'container', namespace: ns,
  pod: name, uid: `uid-${name}`, container: app, node, labels: { app } });
const comp = (component: 'kubelet' | 'scheduler' | 'kube-proxy', node?: string): LogSource =>
  ({ kind: 'component', component, ...(node ? { node } : {}) });

/** A data dir whose store holds lines a minute apart, oldest 10 minutes ago. */
function seeded(): { dataDir: string; writer: LogWriter; now: number } {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-logs-cli-'));
  dirs.push(dataDir);
  const writer = openLogWriter({ dir: logStoreDir(dataDir), flushMs: 0 });
  const now = Date.now();
  const at = (minAgo: number) => now - minAgo * 60_000;
  writer.append({ time: at(10), source: pod('default', 'web-old', 'web'), stream: 'stdout', message: 'GET / from old web' });
  writer.append({ time: at(9), source: comp('kubelet', 'n1'), stream: 'stderr', message: 'kubelet n1 says hi' });
  writer.append({ time: at(8), source: comp('kubelet', 'n2'), stream: 'stderr', message: 'kubelet n2 says hi' });
  writer.append({ time: at(7), source: pod('shop', 'cart-1', 'cart', 'n2'), stream: 'stderr', message: 'cart error 500' });
  writer.append({ time: at(0.5), source: pod('default', 'web-deleted', 'web', 'n2'), stream: 'stdout', message: 'GET /last from deleted web' });
  writer.append({ time: at(0.4), source: pod('default', 'db-1', 'db'), stream: 'stdout', message: 'db ready' });
  writer.append({ time: at(0.3), source: pod('kube-system', 'coredns-1', 'coredns'), stream: 'stdout', message: 'dns ready' });
  writer.flush();
  return { dataDir, writer, now };
}

const messages = (out: string) => out.trim().split('\n').filter(Boolean).map((l) => l.slice(l.indexOf(': ') + 2));

describe('kdp logs', () => {
  it('-l app=web --since 1m returns the lines of a deleted pod, in the default namespace only', async () => {
    const { dataDir } = seeded();
    const r = await kdp('logs', '-l', 'app=web', '--since', '1m', '--data-dir', dataDir);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z n2 default\/web-deleted\/web: GET \/last from deleted web\n$/);
    expect(messages((await kdp('logs', '-l', 'app=web', '--data-dir', dataDir)).out))
      .toEqual(['GET / from old web', 'GET /last from deleted web']);
  });

  it('selects by namespace, pod, container, node and pattern, in time order across all of them', async () => {
    const { dataDir } = seeded();
    const q = async (...a: string[]) => messages((await kdp('logs', ...a, '--data-dir', dataDir)).out);
    expect(await q('-A')).toEqual(['GET / from old web', 'cart error 500', 'GET /last from deleted web', 'db ready', 'dns ready']);
    expect(await q('-n', 'shop')).toEqual(['cart error 500']);
    expect(await q('-A', '--node', 'n2')).toEqual(['cart error 500', 'GET /last from deleted web']);
    expect(await q('--pod', 'db-1')).toEqual(['db ready']);
    expect(await q('-A', '-c', 'cart')).toEqual(['cart error 500']);
    expect(await q('-A', '--grep', 'GET|error')).toEqual(['GET / from old web', 'cart error 500', 'GET /last from deleted web']);
    expect(await q('-A', '--grep', '(?i)READY$', '-l', 'app!=db')).toEqual(['dns ready']);
    expect(await q('-l', 'app in (web,db)', '--since-time', new Date(Date.now() - 120_000).toISOString()))
      .toEqual(['GET /last from deleted web', 'db ready']);
  });

  it('--component shows a component\'s lines, per node as journalctl -u does; dns includes the DNS pods', async () => {
    const { dataDir } = seeded();
    const q = async (...a: string[]) => (await kdp('logs', ...a, '--data-dir', dataDir)).out;
    expect(await q('--component', 'kubelet', '--node', 'n1')).toMatch(/^\S+ n1 kubelet: kubelet n1 says hi\n$/);
    expect(messages(await q('--component', 'kubelet'))).toEqual(['kubelet n1 says hi', 'kubelet n2 says hi']);
    expect(messages(await q('--component', 'scheduler'))).toEqual([]);
    const dnsPod = pod('kube-system', 'coredns-1', 'coredns') as ContainerSource;
    const { writer } = { writer: openLogWriter({ dir: logStoreDir(dataDir), flushMs: 0 }) };
    writer.append({ time: Date.now(), source: { ...dnsPod, labels: { 'k8s-app': 'kube-dns' } }, stream: 'stdout', message: 'dns answer' });
    writer.close();
    expect(messages(await q('--component', 'dns'))).toEqual(['dns answer']);
    expect(messages(await q('--component', 'kube-proxy,dns'))).toEqual(['dns answer']);
  });

  it('-o json prints one record per line with its source and stream', async () => {
    const { dataDir } = seeded();
    const r = await kdp('logs', '-n', 'shop', '-o', 'json', '--data-dir', dataDir);
    const rec = JSON.parse(r.out.trim()) as Record<string, unknown>;
    expect(rec).toMatchObject({ stream: 'stderr', message: 'cart error 500',
      source: { kind: 'container', namespace: 'shop', pod: 'cart-1', container: 'cart', node: 'n2', labels: { app: 'cart' } } });
    expect(rec.time).toMatch(/Z$/);
  });

  it('names the flag of a bad selector, pattern, duration or time', async () => {
    const { dataDir } = seeded();
    const bad = async (...a: string[]) => {
      const r = await kdp('logs', ...a, '--data-dir', dataDir);
      expect(r.code).toBe(2);
      return r.err;
    };
    expect(await bad('-l', 'app in (web')).toMatch(/-l\/--selector: /);
    expect(await bad('--grep', 'a(')).toMatch(/--grep: .*Invalid regular expression/);
    expect(await bad('--since', '10x')).toMatch(/--since: "10x" is not a positive duration/);
    expect(await bad('--since-time', 'yesterday')).toMatch(/--since-time: "yesterday" is not an RFC 3339 time/);
    expect(await bad('--component', 'sshd')).toMatch(/--component: unknown component "sshd" \(one of apiserver, .*, etcd\)/);
    expect(await bad('--component', 'kubelet', '--pod', 'x')).toMatch(/--pod: .*cannot be combined with --component/);
    const none = await kdp('logs', '--data-dir', join(dataDir, 'nowhere'));
    expect(none.err).toMatch(/no cluster logs in/);
  });

  it('-f prints lines written after it started, until interrupted', async () => {
    const { dataDir, writer } = seeded();
    const io = captureIO();
    let stop!: () => void;
    const interrupted = new Promise<void>((r) => { stop = r; });
    const run = main(['logs', '--pod', 'db-1', '-f', '--data-dir', dataDir], { ...io, interrupted,
      out: (t) => { io.stdout += t; }, err: (t) => { io.stderr += t; } });
    await waitUntil(() => io.stdout.includes('db ready'));
    writer.append({ time: Date.now(), source: pod('default', 'db-1', 'db'), stream: 'stdout', message: 'db checkpoint' });
    writer.append({ time: Date.now(), source: pod('default', 'web-x', 'web'), stream: 'stdout', message: 'not shown' });
    writer.flush();
    await waitUntil(() => io.stdout.includes('db checkpoint'));
    stop();
    expect(await run).toBe(0);
    expect(messages(io.stdout)).toEqual(['db ready', 'db checkpoint']);
    writer.close();
  });
});

describe('kdp logs as a process', () => {
  it('stops quietly when its reader goes away (kdp logs | head)', async () => {
    const { dataDir, writer } = seeded();
    for (let i = 0; i < 20_000; i++) {
      writer.append({ time: Date.now() - 1000 + i / 100, source: pod('default', 'db-1', 'db'), stream: 'stdout',
        message: `row ${i} ${'x'.repeat(60)}` });
    }
    writer.close();
    const child = spawn(process.execPath, [join(import.meta.dirname, '../../bin/kdp.js'), 'logs', '--data-dir', dataDir],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(err).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  });
});

async function waitUntil(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}
