// A hostile case is data: one request and what upstream kube-apiserver answers to it. The runner
// turns each into one `it`: it reads the store revision, sends the request over HTTPS, and checks
// the status, the Status body, the revision (unchanged for every refusal), that Object.prototype
// in this (the server's) process is untouched, and any extra check of stored state. The checks
// are compared as one object so a failure shows every expected-vs-actual difference at once.

import { it } from 'vitest';
import type { HostileServer, Identity, RawRequest, Reply } from './harness.js';

/** A refusal: upstream's status code and Status reason. */
export interface Refused {
  readonly code: number;
  readonly reason: string;
  /** Other acceptable (code, reason) pairs, where upstream's answer is not one fixed status. */
  readonly alt?: readonly { readonly code: number; readonly reason: string }[];
  /** `details.causes` holds a cause with this field. */
  readonly field?: string;
  /** The message contains each of these. */
  readonly mentions?: readonly string[];
}

/** An accepted control: the status, and whether the request writes (the revision moves). */
export interface Accepted {
  readonly ok: number;
  readonly writes: boolean;
  /** The answer's `kind` (e.g. a list, not a watch stream). */
  readonly kind?: string;
}

/**
 * Where upstream accepts a request that kdp may also refuse (a `__proto__` key it drops or
 * stores as data): a 2xx that writes nothing, or a 4xx Status; never a 5xx, never pollution.
 */
export interface Tolerated {
  readonly tolerated: true;
  /** Upstream stores it (a `__proto__` ConfigMap key is a valid key): a write is allowed. */
  readonly mayWrite?: boolean;
}

export interface HostileCase {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly as?: Identity;
  /** Written byte for byte on its own TLS connection instead (method and path are labels). */
  readonly raw?: RawRequest;
  /** A watch: an accepted one is judged by its status line alone. */
  readonly streaming?: boolean;
  /** Runs first; may give the path (e.g. one naming a revision it compacted away). */
  readonly prepare?: (h: HostileServer) => Promise<{ path?: string }>;
  readonly expect: Refused | Accepted | Tolerated;
  /** Asserts stored state after the request (e.g. a refused delete removed nothing). */
  readonly after?: (h: HostileServer) => Promise<void>;
}

type Expectation = Refused | Accepted | Tolerated;

export function isAccepted(e: Expectation): e is Accepted {
  return (e as Accepted).ok !== undefined;
}

export function isTolerated(e: Expectation): e is Tolerated {
  return (e as Tolerated).tolerated === true;
}

const WATCHED_PROTOTYPES: readonly object[] = [Object.prototype, Array.prototype,
  Function.prototype, String.prototype];

type Snapshot = Map<string, PropertyDescriptor>[];

function snapshot(): Snapshot {
  return WATCHED_PROTOTYPES.map((p) => new Map(Object.getOwnPropertyNames(p)
    .map((n) => [n, Object.getOwnPropertyDescriptor(p, n)!])));
}

function sameDescriptor(a: PropertyDescriptor, b: PropertyDescriptor): boolean {
  return a.value === b.value && a.get === b.get && a.set === b.set &&
    a.writable === b.writable && a.enumerable === b.enumerable;
}

/**
 * Properties this request added to or replaced on Object/Array/Function/String.prototype; they
 * are put back as they were, so one polluting request does not fail every later case.
 */
function pollutionSince(before: Snapshot): string[] {
  const changed: string[] = [];
  WATCHED_PROTOTYPES.forEach((proto, i) => {
    const was = before[i]!;
    for (const n of Object.getOwnPropertyNames(proto)) {
      const old = was.get(n);
      const now = Object.getOwnPropertyDescriptor(proto, n)!;
      if (old && sameDescriptor(old, now)) continue;
      changed.push(old ? `${n} (replaced)` : n);
      if (old) Object.defineProperty(proto, n, old);
      else delete (proto as Record<string, unknown>)[n];
    }
  });
  return changed;
}

function refusalView(r: Reply, e: Refused) {
  const b = r.body ?? {};
  const message = typeof b.message === 'string' ? b.message : '';
  const causes: any[] = Array.isArray(b.details?.causes) ? b.details.causes : [];
  const which = e.alt?.find((a) => a.code === r.status) ?? e;
  const actual = {
    status: r.status, kind: b.kind, apiVersion: b.apiVersion, statusField: b.status,
    code: b.code, reason: b.reason ?? (which.reason === '' ? '' : undefined),
    ...(e.field !== undefined ? { causeField: causes.some((c) => c?.field === e.field) ?
      e.field : causes.map((c) => c?.field) } : {}),
    ...(e.mentions ? { mentions: e.mentions.filter((m) => message.includes(m)) } : {}),
  };
  const expected = {
    status: which.code, kind: 'Status', apiVersion: 'v1', statusField: 'Failure',
    code: which.code, reason: which.reason,
    ...(e.field !== undefined ? { causeField: e.field } : {}),
    ...(e.mentions ? { mentions: [...e.mentions] } : {}),
  };
  return { actual, expected, message };
}

/** Throws one line per differing key (`key: expected X, got Y`) and the start of the reply. */
function mustMatch(actual: Record<string, unknown>, expected: Record<string, unknown>,
  text: string): void {
  const diffs = Object.keys(expected).filter((k) =>
    JSON.stringify(actual[k]) !== JSON.stringify(expected[k]))
    .map((k) => `${k}: expected ${JSON.stringify(expected[k])}, got ${JSON.stringify(actual[k])}`);
  if (diffs.length) {
    throw new Error(`${diffs.join('; ')}\n  reply: ${text.slice(0, 300).replace(/\s+/g, ' ')}`);
  }
}

function title(c: HostileCase): string {
  const e = c.expect;
  const want = isAccepted(e) ? `${e.ok} (accepted control)` : isTolerated(e) ?
    'no write or a 4xx Status' : [e, ...(e.alt ?? [])].map((a) => `${a.code} ${a.reason}`)
      .join(' or ');
  return `${c.method} ${c.name} → ${want}`;
}

/** Declares one `it` per case, in order, against the server `h()` returns. */
export function runCases(cases: readonly HostileCase[], h: () => HostileServer): void {
  for (const c of cases) {
    it(title(c), async () => {
      const srv = h();
      const path = (await c.prepare?.(srv))?.path ?? c.path;
      const protoBefore = snapshot();
      const before = await srv.revision();
      const r = c.raw ? await srv.sendRaw(c.raw) : await srv.send(c.method, path, {
        body: c.body, contentType: c.contentType, headers: c.headers, as: c.as,
        streaming: c.streaming,
      });
      const after = await srv.revision();
      const polluted = pollutionSince(protoBefore);
      const e = c.expect;
      if (isTolerated(e)) {
        const refused = r.status >= 400 && r.status < 500;
        mustMatch({ status: r.status < 300 ? '2xx' : refused ? '4xx' : r.status,
          statusBody: refused ? r.body?.kind === 'Status' && r.body?.code === r.status : true,
          revisionMoved: after !== before, polluted },
        { status: refused ? '4xx' : '2xx', statusBody: true,
          revisionMoved: e.mayWrite && !refused ? after !== before : false, polluted: [] },
        r.text);
      } else if (isAccepted(e)) {
        mustMatch({ status: r.status, revisionMoved: after !== before, polluted,
          ...(e.kind ? { kind: r.body?.kind } : {}) },
        { status: e.ok, revisionMoved: e.writes, polluted: [],
          ...(e.kind ? { kind: e.kind } : {}) }, r.text);
      } else {
        const v = refusalView(r, e);
        mustMatch({ ...v.actual, revisionMoved: after !== before, polluted },
          { ...v.expected, revisionMoved: false, polluted: [] }, r.text);
      }
      if (c.after) await c.after(srv);
    });
  }
}

/** Sets `value` at a dotted path in a copy of `obj` (creating objects on the way). */
export function setPath(obj: unknown, path: string, value: unknown): any {
  const out = structuredClone(obj) as Record<string, any>;
  const keys = path.split('.');
  let cur = out;
  for (const k of keys.slice(0, -1)) {
    if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = {};
    cur = cur[k];
  }
  cur[keys[keys.length - 1]!] = value;
  return out;
}

/** `{a: {b: value}}` for `a.b`: a merge or strategic patch setting one field. */
export function patchAt(path: string, value: unknown): Record<string, unknown> {
  return setPath({}, path, value);
}

/** A table: the objects its cases act on (created, as admin, before they run) and the cases. */
export interface HostileTable {
  readonly fixtures?: readonly { readonly path: string; readonly body: unknown }[];
  readonly cases: readonly HostileCase[];
}
