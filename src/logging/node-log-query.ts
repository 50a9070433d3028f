// The kubelet's node log query (upstream's NodeLogQuery, pkg/kubelet/kubelet_server_journal.go):
// `GET /logs/?query=kubelet&sinceTime=…&untilTime=…&tailLines=…&pattern=…&boot=…` on the
// kubelet API, reached as `kubectl get --raw /api/v1/nodes/N/proxy/logs/?query=kubelet`.
// Upstream runs journalctl for the named services; a kdp node's journal is the log store that
// holds its components' lines (the cluster's store for kdp up's nodes, the node's own for a node
// joined from another machine, node-log-agent.ts), so a query reads that store for this node's
// component records and prints them as `journalctl --utc --output=short-precise` does.
// Parameters are parsed and validated as upstream (the same field errors, 400 with text).

import { compileGrep, type GrepPattern } from './grep-scan.js';
import { readLogs } from './log-reader.js';
import { parseTime, type ComponentName, type LogRecord } from './record.js';

/** The services a node's journal holds (its agents); others are "not found" as upstream. */
export const NODE_SERVICES: readonly ComponentName[] = ['kubelet', 'kube-proxy'];

const MAX_TAIL_LINES = 100_000;
const MAX_SERVICES = 4;
const MAX_SERVICE_LENGTH = 256;
const UNSAFE = /[^a-zA-Z\-_0-9@]+/;

export interface NodeLogQuery {
  readonly services: readonly string[];
  readonly sinceMs?: number;
  readonly untilMs?: number;
  readonly tailLines?: number;
  readonly boot?: number;
  readonly pattern?: GrepPattern;
}

export type NodeLogAnswer = { readonly code: number; readonly body: string };

/** apimachinery's field.Error text for a bad value: strings quoted (%q), the rest as Go's %#v. */
const goValue = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v)
  : Array.isArray(v) ? `[]string{${v.map((x) => JSON.stringify(x)).join(', ')}}` : String(v));
const invalid = (field: string, value: unknown, detail: string) => `${field}: Invalid value: ${goValue(value)}: ${detail}`;
/** utilerrors.Aggregate's text: one error alone, several in brackets. */
const aggregate = (errs: readonly string[]) => (errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);

function goInt(field: string, s: string, errs: string[]): number | undefined {
  if (/^[+-]?\d+$/.test(s) && Number.isSafeInteger(Number(s))) return Number(s);
  errs.push(invalid(field, s, `strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`));
  return undefined;
}

/**
 * The query of the request's parameters; a string is the 400's text (upstream's field errors),
 * undefined when there are no parameters at all (upstream then serves /var/log's files).
 */
export function parseNodeLogQuery(q: URLSearchParams): NodeLogQuery | string | undefined {
  if ([...q.keys()].length === 0) return undefined;
  const errs: string[] = [];
  const queries = q.getAll('query');
  // As upstream: `/` or `\` marks a file under /var/log, anything else non-blank a service.
  const files = queries.filter((s) => /[/\\]/.test(s));
  const services = queries.filter((s) => !/[/\\]/.test(s) && s.trim() !== '');
  if (q.has('query') && files.length === 0 && services.length === 0) {
    errs.push(invalid('query', queries, 'query cannot be empty'));
  }
  const time = (field: string): number | undefined => {
    const v = q.get(field);
    if (!v) return undefined;
    const ms = parseTime(v);
    if (Number.isNaN(ms)) { errs.push(invalid(field, v, 'invalid time format')); return undefined; }
    return ms;
  };
  const sinceMs = time('sinceTime');
  const untilMs = time('untilTime');
  const boot = q.get('boot') ? goInt('boot', q.get('boot')!, errs) : undefined;
  const tailLines = q.get('tailLines') ? goInt('tailLines', q.get('tailLines')!, errs) : undefined;
  if (errs.length) return aggregate(errs);
  // validate()
  for (const s of services) {
    if (s.length > MAX_SERVICE_LENGTH) errs.push(invalid('query', s, 'length must be less than 100'));
    else if (UNSAFE.test(s)) errs.push(invalid('query', s, 'input contains unsupported characters'));
  }
  if (services.length > MAX_SERVICES) errs.push(`query: Too many: ${services.length}: must have at most ${MAX_SERVICES} items`);
  const pattern = q.get('pattern') ?? '';
  const options = sinceMs !== undefined || untilMs !== undefined || tailLines !== undefined || boot !== undefined
    || pattern !== '';
  if (files.length === 0 && services.length === 0) errs.push('query: Required value: cannot be empty with options');
  else if (files.length > 0 && services.length > 0) {
    errs.push(invalid('query', `[${files.join(' ')}], [${services.join(' ')}]`, 'cannot specify a file and service'));
  } else if (files.length > 1) errs.push(invalid('query', files, 'cannot specify more than one file'));
  else if (files.length === 1 && options) errs.push(invalid('query', files, 'cannot specify file with options'));
  else if (files.length === 1) {
    // kdp's nodes have no /var/log: their journal is the log store (see the file's head).
    errs.push(invalid('query', files, `kdp nodes keep no log files; query a service: ${NODE_SERVICES.join(', ')}`));
  }
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs > untilMs) {
    errs.push(invalid('untilTime', q.get('untilTime'), 'must be after `sinceTime`'));
  }
  if (boot !== undefined && boot > 0) errs.push(invalid('boot', boot, 'must be less than 1'));
  if (tailLines !== undefined && (tailLines < 0 || tailLines > MAX_TAIL_LINES)) {
    errs.push(invalid('tailLines', tailLines, `must be between 0 and ${MAX_TAIL_LINES}, inclusive`));
  }
  let grep: GrepPattern | undefined;
  if (pattern) {
    try { grep = compileGrep(pattern); } catch (e) { errs.push(invalid('pattern', pattern, (e as Error).message)); }
  }
  if (errs.length) return aggregate(errs);
  return { services, ...(sinceMs !== undefined ? { sinceMs } : {}), ...(untilMs !== undefined ? { untilMs } : {}),
    ...(tailLines !== undefined ? { tailLines } : {}), ...(boot !== undefined ? { boot } : {}),
    ...(grep ? { pattern: grep } : {}) };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** journalctl's `short-precise` line in UTC: `Dec 04 07:23:27.123456 n1 kubelet: message`. */
export function journalLine(r: LogRecord, node: string): string {
  const d = new Date(Math.floor(r.time));
  const p2 = (n: number) => String(n).padStart(2, '0');
  const micros = String(Math.min(999_999, Math.round((r.time - Math.floor(r.time / 1000) * 1000) * 1000))).padStart(6, '0');
  const who = r.source.kind === 'component' ? r.source.component : r.source.container;
  return `${MONTHS[d.getUTCMonth()]} ${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:`
    + `${p2(d.getUTCSeconds())}.${micros} ${node} ${who}: ${r.message}\n`;
}

/**
 * Answers `q` for `node` from the store in `storeDir`: its services' records in time order
 * (the last `tailLines`), as journalctl prints them; a service the node has no journal of is
 * "log not found" as upstream's file fallback says it. kdp keeps no boot ids: boot 0 (the
 * current boot) is everything kept, an earlier boot has no entries.
 */
export function answerNodeLogQuery(storeDir: string, node: string, q: NodeLogQuery): string {
  const wanted = new Set(q.services.filter((s) => (NODE_SERVICES as readonly string[]).includes(s)));
  let lines: string[] = [];
  if (wanted.size && !(q.boot !== undefined && q.boot < 0)) {
    const keep = q.tailLines;
    readLogs(storeDir, { sinceMs: q.sinceMs, untilMs: q.untilMs, grep: q.pattern,
      source: (s) => s.kind === 'component' && s.node === node && wanted.has(s.component) }, (r) => {
      lines.push(journalLine(r, node));
      // A bounded tail: trimmed in batches, not per line.
      if (keep !== undefined && lines.length > 2 * keep + 1024) lines = lines.slice(lines.length - keep);
    });
    if (keep !== undefined) lines = keep === 0 ? [] : lines.slice(-keep);
  }
  let out = wanted.size ? (lines.length ? lines.join('') : '-- No entries --\n') : '';
  for (const s of q.services) if (!wanted.has(s)) out += `\nlog not found for ${s}\n`;
  return out;
}

/** The kubelet's `/logs/` handler over the store in `storeDir` (kubelet-server.ts's nodeLogs). */
export function nodeLogQueryHandler(storeDir: string, node: string): (q: URLSearchParams) => NodeLogAnswer {
  return (params) => {
    const q = parseNodeLogQuery(params);
    if (q === undefined) {
      return { code: 404, body: `kdp nodes keep no /var/log files: query a service, e.g. /logs/?query=kubelet\n` };
    }
    if (typeof q === 'string') return { code: 400, body: `${q}\n` };
    return { code: 200, body: answerNodeLogQuery(storeDir, node, q) };
  };
}
