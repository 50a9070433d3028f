// `kdp logs --grep` over 1 GB of kept logs (issue 15: ≥ 200 MB/s), side by side with `grep -c`
// over the same message files (LC_ALL=C, the anchor no scan in Node beats by much). A seeded
// generator writes the store through the real writer: access lines, app errors and kubelet
// lines from 400 pods on 20 nodes. Each query reads the store as `kdp logs` does (source
// tables, meta, message files) and counts what it returns; MB/s is message bytes scanned per
// wall-clock second, after one warm-up pass (both sides read from the page cache).
//   node bin/run-ts.js bench/logs-grep.ts     (BENCH_SCALE=0.1 for 100 MB)

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileGrep } from '../src/logging/grep-scan.js';
import { readLogs, type LogQuery, type ScanStats } from '../src/logging/log-reader.js';
import { openLogWriter } from '../src/logging/log-writer.js';
import type { LogSource } from '../src/logging/record.js';
import { listSegments } from '../src/logging/segments.js';
import { mib, report, seededRandom } from './lib-bench.js';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const TARGET_BYTES = Math.round(1024 * 1024 * 1024 * SCALE);
const dir = mkdtempSync(join(tmpdir(), 'kdp-bench-logs-grep-'));
const rnd = seededRandom(15);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

const sources: LogSource[] = [];
for (let i = 0; i < 400; i++) {
  const app = ['web', 'api', 'cache', 'worker'][i % 4]!;
  sources.push({ kind: 'container', namespace: i % 5 ? 'default' : 'shop', pod: `${app}-${(i * 7919).toString(36)}`,
    uid: `uid-${i}`, container: app, node: `n${(i % 20) + 1}`, labels: { app, tier: i % 2 ? 'front' : 'back' } });
}
for (let n = 1; n <= 20; n++) sources.push({ kind: 'component', component: 'kubelet', node: `n${n}` });
const paths = ['/', '/api/v1/items', '/healthz', '/static/app.js', '/login', '/cart/checkout'];

function line(): string {
  const r = rnd();
  const ip = `10.244.${Math.floor(rnd() * 20)}.${Math.floor(rnd() * 250)}`;
  if (r < 0.85) {
    const status = rnd() < 0.995 ? 200 : 503;
    return `http from=${ip}:${40000 + Math.floor(rnd() * 20000)} to=10.244.1.7:8080 GET ${pick(paths)} ` +
      `status=${status} bytes=${Math.floor(rnd() * 5000)} dur=${(rnd() * 20).toFixed(3)}ms`;
  }
  if (r < 0.97) return `level=info msg="processed batch" batch=${Math.floor(rnd() * 1e6)} items=${Math.floor(rnd() * 100)}`;
  if (r < 0.9999) return `level=warn msg="slow upstream" upstream=${ip} latency=${(rnd() * 900).toFixed(1)}ms`;
  return `level=error msg="connection reset by peer" request-id=${Math.floor(rnd() * 1e9).toString(16)} fatal=true`;
}

// --- generate
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const writer = openLogWriter({ dir, maxBytes: TARGET_BYTES * 1.3, segmentBytes: 64 * 1024 * 1024, flushMs: 0 });
let written = 0;
let time = Date.parse('2026-12-04T00:00:00Z');
while (written < TARGET_BYTES) {
  for (let k = 0; k < 10_000; k++) {
    const message = line();
    written += message.length + 1;
    time += 0.5 + rnd();
    writer.append({ time, source: pick(sources), stream: rnd() < 0.9 ? 'stdout' : 'stderr', message });
  }
}
writer.close();
const logFiles = listSegments(dir).map((f) => f.log);
const logBytes = logFiles.reduce((n, f) => n + statSync(f).size, 0);
const storeBytes = listSegments(dir).reduce((n, f) => n + statSync(f.meta).size + statSync(f.log).size, 0);
console.log(`generated ${mib(logBytes).toFixed(0)} MiB of messages (${mib(storeBytes).toFixed(0)} MiB with meta) ` +
  `in ${logFiles.length} segments, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const cpu = process.cpuUsage(cpu0);
report('generator + writer throughput', mib(logBytes) / ((performance.now() - t0) / 1000), 'MiB/s');
report('generator + writer CPU', (cpu.user + cpu.system) / 1000 / mib(logBytes), 'ms per MiB');

function kdpQuery(q: LogQuery): { count: number; ms: number; stats: ScanStats } {
  const stats: ScanStats = { segments: 0, segmentsRead: 0, bytesScanned: 0 };
  let count = 0;
  const s = performance.now();
  readLogs(dir, q, () => { count++; }, stats);
  return { count, ms: performance.now() - s, stats };
}

function grepC(pattern: string, extra: string[] = []): { count: number; ms: number } {
  const s = performance.now();
  let out = '';
  try {
    out = execFileSync('grep', ['-c', '-E', ...extra, pattern, ...logFiles], { encoding: 'utf8',
      env: { ...process.env, LC_ALL: 'C' }, maxBuffer: 1 << 24 });
  } catch (e) { out = (e as { stdout?: string }).stdout ?? ''; } // exit 1: no match
  const count = out.trim().split('\n').reduce((n, l) => n + Number(l.slice(l.lastIndexOf(':') + 1)), 0);
  return { count, ms: performance.now() - s };
}

const MB = 1e6;
const cases: Array<{ name: string; re: string; grepArgs?: string[] }> = [
  { name: 'rare literal', re: 'connection reset by peer' },
  { name: 'regex, 0.5% of lines', re: 'status=5[0-9][0-9]' },
  { name: 'case-insensitive', re: '(?i)FATAL=TRUE', grepArgs: ['-i'] },
  { name: 'alternation, no required literal', re: 'reset by peer|upstream=10\\.244\\.3\\.' },
];
for (const c of cases) {
  const grepRe = c.re.replace(/^\(\?i\)/, '');
  kdpQuery({ grep: compileGrep(c.re) }); // warm-up: page cache
  grepC(grepRe, c.grepArgs);
  const k = kdpQuery({ grep: compileGrep(c.re) });
  const g = grepC(grepRe, c.grepArgs);
  if (k.count !== g.count) throw new Error(`${c.name}: kdp found ${k.count} lines, grep -c ${g.count}`);
  console.log(`${c.name} /${c.re}/: ${k.count} lines; kdp ${k.ms.toFixed(0)} ms, grep -c ${g.ms.toFixed(0)} ms`);
  report(`  kdp logs --grep (${c.name})`, k.stats.bytesScanned / MB / (k.ms / 1000), 'MB/s', { op: '>=', value: 200 });
  report(`  grep -c (${c.name})`, logBytes / MB / (g.ms / 1000), 'MB/s');
}

// --- the index: one pod over the last 5% of the time, and a selector with a pattern
const until = time;
const span = until - Date.parse('2026-12-04T00:00:00Z');
const one = sources[7]! as { pod: string };
const narrow = kdpQuery({ sinceMs: until - span * 0.05,
  source: (s) => s.kind === 'container' && s.pod === one.pod });
console.log(`one pod, last 5% of the time: ${narrow.count} lines in ${narrow.ms.toFixed(0)} ms ` +
  `(${narrow.stats.segmentsRead}/${narrow.stats.segments} segments read)`);
const kubelet = kdpQuery({ source: (s) => s.kind === 'component' && s.node === 'n3', grep: compileGrep('slow upstream') });
console.log(`kubelet on n3 with --grep: ${kubelet.count} lines in ${kubelet.ms.toFixed(0)} ms`);
rmSync(dir, { recursive: true, force: true });
