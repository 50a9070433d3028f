// A joined node's logging, without a cluster: the kubelet's node log query (upstream's
// parameters and field errors, journalctl's lines) over a store, the shipper's cursor across
// restarts and failures, and the ingest's field-by-field refusal of a shipment.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeShipment, encodeShipment } from '../../src/logging/log-ingest.js';
import { buildLogShipper } from '../../src/logging/log-shipper.js';
import { openLogWriter, type LogWriter } from '../../src/logging/log-writer.js';
import { answerNodeLogQuery, parseNodeLogQuery, type NodeLogQuery } from '../../src/logging/node-log-query.js';
import type { LogRecord } from '../../src/logging/record.js';

const dirs: string[] = [];
const tmp = () => { const d = mkdtempSync(join(tmpdir(), 'kdp-nodelog-')); dirs.push(d); return d; };
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const T0 = Date.parse('2026-12-04T07:23:27Z');
const kubelet = { kind: 'component', component: 'kubelet', node: 'n1' } as const;
const proxy = { kind: 'component', component: 'kube-proxy', node: 'n1' } as const;
const otherKubelet = { kind: 'component', component: 'kubelet', node: 'n2' } as const;
const web = { kind: 'container', namespace: 'default', pod: 'web', uid: 'u1', container: 'c', node: 'n1',
  labels: { app: 'web' } } as const;

function store(records: readonly LogRecord[]): { dir: string; writer: LogWriter } {
  const dir = tmp();
  const writer = openLogWriter({ dir, flushMs: 0 });
  for (const r of records) writer.append(r);
  writer.flush();
  return { dir, writer };
}

const query = (s: string) => parseNodeLogQuery(new URLSearchParams(s));

describe('node log query (/logs/?query=)', () => {
  it('validates as upstream: parse errors first, then every validation error in one aggregate', () => {
    expect(query('')).toBeUndefined();
    expect(query('query=%20%20')).toBe('query: Invalid value: []string{"  "}: query cannot be empty');
    expect(query('tailLines=5')).toBe('query: Required value: cannot be empty with options');
    expect(query('query=kubelet&sinceTime=yesterday&tailLines=x')).toBe('[sinceTime: Invalid value: "yesterday": '
      + 'invalid time format, tailLines: Invalid value: "x": strconv.Atoi: parsing "x": invalid syntax]');
    // Go's time.Parse refuses a day the month does not have (Date.parse would roll it over).
    expect(query('query=kubelet&sinceTime=2026-02-30T07:00:00Z')).toBe(
      'sinceTime: Invalid value: "2026-02-30T07:00:00Z": invalid time format');
    expect(query('query=kube;let')).toBe('query: Invalid value: "kube;let": input contains unsupported characters');
    expect(query('query=a&query=b&query=c&query=d&query=e')).toBe('query: Too many: 5: must have at most 4 items');
    expect(query('query=kubelet&query=/var/log/x')).toBe(
      'query: Invalid value: "[/var/log/x], [kubelet]": cannot specify a file and service');
    expect(query('query=kubelet&sinceTime=2026-12-04T08:00:00Z&untilTime=2026-12-04T07:00:00Z')).toBe(
      'untilTime: Invalid value: "2026-12-04T07:00:00Z": must be after `sinceTime`');
    expect(query('query=kubelet&pattern=(')).toMatch(/^pattern: Invalid value: "\(": /);
    expect(query('query=kubelet&query=kube-proxy&tailLines=2&boot=0')).toMatchObject(
      { services: ['kubelet', 'kube-proxy'], tailLines: 2, boot: 0 });
  });

  it("answers from the store: the node's services only, time-ordered, as journalctl short-precise", () => {
    const { dir, writer } = store([
      { time: T0 + 0.5, source: kubelet, stream: 'stderr', message: 'first' },
      { time: T0 + 1000, source: proxy, stream: 'stderr', message: 'synced rules' },
      { time: T0 + 2000, source: otherKubelet, stream: 'stderr', message: 'n2 line' },
      { time: T0 + 3000, source: web, stream: 'stdout', message: 'web line' },
      { time: T0 + 4000.25, source: kubelet, stream: 'stderr', message: 'second' },
    ]);
    writer.close();
    const ask = (s: string) => answerNodeLogQuery(dir, 'n1', query(s) as NodeLogQuery);
    expect(ask('query=kubelet')).toBe('Dec 04 07:23:27.000500 n1 kubelet: first\nDec 04 07:23:31.000250 n1 kubelet: second\n');
    expect(ask('query=kubelet&query=kube-proxy&tailLines=2')).toBe(
      'Dec 04 07:23:28.000000 n1 kube-proxy: synced rules\nDec 04 07:23:31.000250 n1 kubelet: second\n');
    expect(ask('query=kubelet&pattern=^sec')).toBe('Dec 04 07:23:31.000250 n1 kubelet: second\n');
    expect(ask('query=kubelet&sinceTime=2026-12-04T07:23:28Z&untilTime=2026-12-04T07:23:30Z')).toBe('-- No entries --\n');
    expect(ask('query=kubelet&boot=-1')).toBe('-- No entries --\n');
    expect(ask('query=kubelet&tailLines=0')).toBe('-- No entries --\n');
    expect(ask('query=containerd')).toBe('\nlog not found for containerd\n');
  });
});

describe('log shipper', () => {
  const rec = (i: number): LogRecord => ({ time: T0 + i, source: kubelet, stream: 'stderr', message: `line ${i}` });

  it('ships in batches, saves its cursor per acknowledged batch, and goes on after a restart or a failure', async () => {
    const { dir, writer } = store([0, 1, 2, 3].map(rec));
    const cursorFile = join(tmp(), 'cursor.json');
    const got: string[][] = [];
    let fail = false;
    const ship = async (rs: readonly LogRecord[]) => {
      if (fail) throw new Error('API server down');
      got.push(rs.map((r) => r.message));
    };
    const first = buildLogShipper({ storeDir: dir, cursorFile, ship, maxBatchBytes: 450 });
    expect(await first.pass()).toBe(4);
    expect(got).toEqual([['line 0', 'line 1'], ['line 2', 'line 3']]);
    expect(await first.pass()).toBe(0);
    // A new shipper (a restarted node) on the same cursor sends nothing twice.
    writer.append(rec(4));
    writer.flush();
    const errors: string[] = [];
    const second = buildLogShipper({ storeDir: dir, cursorFile, ship, onError: (e) => errors.push((e as Error).message) });
    fail = true;
    await expect(second.pass()).rejects.toThrow('API server down');
    await expect(second.pass()).rejects.toThrow('API server down');
    expect(errors).toEqual(['API server down']);
    fail = false;
    expect(await second.pass()).toBe(1);
    // A new segment (the writer reopened) is shipped after the old one's rest.
    writer.close();
    const reopened = openLogWriter({ dir, flushMs: 0 });
    reopened.append(rec(5));
    reopened.close();
    expect(await second.pass()).toBe(1);
    expect(got.flat()).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    await second.stop();
  });
});

describe('log shipment decoding', () => {
  it("takes only the node's own records and names the first bad field", () => {
    const ok = encodeShipment('n1', [{ time: T0, source: web, stream: 'stdout', message: 'hi' }]);
    expect(decodeShipment('n1', ok)).toEqual([{ time: T0, source: web, stream: 'stdout', message: 'hi' }]);
    const bad = (node: string, text: string) => { try { decodeShipment(node, text); return ''; } catch (e) { return (e as Error).message; } };
    expect(bad('n2', ok)).toBe('node: must be the node of the path ("n2")');
    expect(bad('n1', ok.replace('"node":"n1","labels"', '"node":"n2","labels"')))
      .toBe('records[0].source.node: must be "n1": a node ships only its own lines');
    expect(bad('n1', encodeShipment('n1', [{ time: T0, source: { kind: 'component', component: 'apiserver', node: 'n1' } as never,
      stream: 'stderr', message: 'x' }]))).toBe("records[0].source.component: must be one of the node's: kubelet, kube-proxy");
    expect(bad('n1', ok.replace('"hi"', '"a\\nb"'))).toBe('records[0].message: must be one line of text');
    expect(bad('n1', ok.replace('"stdout"', '"stdin"'))).toBe('records[0].stream: must be stdout or stderr');
    expect(bad('n1', ok.replace('{"app":"web"}', '{"app":1}'))).toBe('records[0].source.labels: must map strings to strings');
    expect(bad('n1', '{')).toMatch(/^body: not JSON: /);
  });
});
