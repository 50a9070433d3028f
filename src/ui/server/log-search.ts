// The web UI's log search: the cluster log store (`<data-dir>/logs`, src/logging) read with the
// filters `kdp logs` takes (the same buildLogQuery), streamed to the page as newline-delimited
// JSON — the newest `limit` matches first, then, with follow, each new match as the collector
// writes it. Deleted pods' lines are in the store like any other; each line carries its pod's
// UID so the page can tell which pods are gone.
//   {"type":"LINE","time":"…","node":"n1","source":"default/web-1/web","uid":"…","stream":"stdout","message":"…"}
//   {"type":"SCANNED","matched":1234,"shown":1000}   after the kept lines: the scan is done
// Follow reads the store's new records every FOLLOW_MS, as `kdp logs -f` does (the store is
// written by another part of the process, or by another process: nothing to be told by).

import { existsSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { kdpError } from '../../errors.js';
import { logStoreDir } from '../../logging/collector.js';
import { readLogs, readNewLogs } from '../../logging/log-reader.js';
import { buildLogQuery, type LogFilters } from '../../logging/query.js';
import { formatTime, type LogRecord } from '../../logging/record.js';

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 20_000;
const FOLLOW_MS = 250;
const BLOCK = 64 * 1024;

export interface LogSearch {
  readonly filters: LogFilters;
  readonly limit: number;
  readonly follow: boolean;
}

/** The search of a query string (`ns`, `all`, `selector`, `pod`, `container`, `component`,
 *  `node`, `since`, `sinceTime`, `grep`, `limit`, `follow`); bad values refused naming them. */
export function parseLogSearch(q: Readonly<Record<string, string | undefined>>): LogSearch {
  const text = (k: string) => (q[k] === undefined || q[k] === '' ? undefined : q[k]);
  const limitText = text('limit');
  const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw kdpError('KDP_BAD_REQUEST', `limit: "${limitText}" is not a whole number from 1 to ${MAX_LIMIT}`);
  }
  const all = q.all === 'true' || q.all === '1';
  if (all && text('ns') !== undefined) {
    throw kdpError('KDP_BAD_REQUEST', 'ns: cannot be combined with all (every namespace)');
  }
  const filters: LogFilters = {
    namespace: text('ns'), allNamespaces: all, selector: text('selector'), pod: text('pod'),
    container: text('container'), component: text('component'), node: text('node'),
    since: text('since'), sinceTime: text('sinceTime'), grep: text('grep'),
  };
  // The flags' checks, now, so a bad filter is a 400 before anything is streamed.
  buildLogQuery(filters);
  return { filters, limit, follow: q.follow === 'true' || q.follow === '1' };
}

function lineOf(r: LogRecord): string {
  const s = r.source;
  const common = { type: 'LINE', time: formatTime(r.time), node: s.node ?? '', stream: r.stream };
  const body = s.kind === 'container'
    ? { ...common, kind: 'container', source: `${s.namespace}/${s.pod}/${s.container}`, uid: s.uid }
    : { ...common, kind: 'component', source: s.component };
  return `${JSON.stringify({ ...body, message: r.message })}\n`;
}

/**
 * Streams the search to `res` (already answered 200): the newest `limit` matches in time order,
 * a SCANNED line, then (follow) new matches until the client goes away. Returns a stopper.
 */
export function streamLogSearch(dataDir: string, s: LogSearch, res: ServerResponse): () => void {
  const dir = logStoreDir(dataDir);
  const query = buildLogQuery(s.filters);
  let pending = '';
  const flush = () => {
    if (pending && !res.writableEnded) res.write(pending);
    pending = '';
  };
  const print = (r: LogRecord) => {
    pending += lineOf(r);
    if (pending.length >= BLOCK) flush();
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    if (!res.writableEnded) res.end();
  };
  if (!existsSync(dir)) {
    res.write(`${JSON.stringify({ type: 'SCANNED', matched: 0, shown: 0, empty: true })}\n`);
    stop();
    return stop;
  }
  // The newest `limit`, kept in a ring while the store is read in time order.
  const ring: LogRecord[] = [];
  let matched = 0;
  const cursor = readLogs(dir, query, (r) => {
    matched++;
    ring.push(r);
    if (ring.length >= 2 * s.limit) ring.splice(0, ring.length - s.limit);
  });
  const kept = ring.slice(-s.limit);
  for (const r of kept) print(r);
  pending += `${JSON.stringify({ type: 'SCANNED', matched, shown: kept.length })}\n`;
  flush();
  if (!s.follow) {
    stop();
    return stop;
  }
  const next = () => {
    if (stopped) return;
    try {
      readNewLogs(dir, query, cursor, print);
      flush();
    } catch (e) {
      res.write(`${JSON.stringify({ type: 'ERROR', message: (e as Error).message })}\n`);
      stop();
      return;
    }
    timer = setTimeout(next, FOLLOW_MS);
  };
  timer = setTimeout(next, FOLLOW_MS);
  return stop;
}
