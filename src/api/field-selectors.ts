// Field selectors (apimachinery pkg/fields): `metadata.name=x,spec.nodeName!=` with the fields
// each resource supports upstream (its GetAttrs / field label conversion). A field the resource
// does not support is a KDP_BAD_REQUEST `field label not supported: <field>`, as upstream.

import { kdpError } from '../errors.js';
import type { KubeObject } from './object.js';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export interface FieldMatcher {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  matches(obj: KubeObject): boolean;
  /** The value a `field=value` requirement pins, if any (for indexed lookups). */
  exactValue(field: string): string | undefined;
  toString(): string;
}

const META = ['metadata.name', 'metadata.namespace'];

/** Fields selectable per plural resource (upstream v1.33); others get only `metadata.*`. */
export const SELECTABLE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  pods: [...META, 'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName',
    'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP',
    'status.nominatedNodeName'],
  events: [...META, 'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name',
    'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion',
    'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'],
  nodes: [...META, 'spec.unschedulable'],
  namespaces: [...META, 'status.phase'],
  secrets: [...META, 'type'],
  services: [...META, 'spec.clusterIP', 'spec.type'],
  replicasets: [...META, 'status.replicas'],
  jobs: [...META, 'status.successful'],
};

export function selectableFields(resource: string): readonly string[] {
  return SELECTABLE_FIELDS[resource] ?? META;
}

function walk(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * The string value of a selectable field, as upstream's field set renders it: missing → '',
 * booleans and numbers in decimal. `source` on events is `source.component`; `status.successful`
 * on jobs is `status.succeeded`; an unset `metadata.namespace` is ''.
 */
export function fieldValue(obj: KubeObject, field: string): string {
  let v: unknown;
  if (field === 'source') v = walk(obj, 'source.component');
  else if (field === 'status.successful') v = walk(obj, 'status.succeeded') ?? 0;
  else if (field === 'spec.hostNetwork' || field === 'spec.unschedulable') {
    v = walk(obj, field) ?? false;
  } else if (field === 'status.replicas') v = walk(obj, field) ?? 0;
  else v = walk(obj, field);
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : String(v);
}

function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) { cur += c + s[i + 1]; i++; continue; }
    if (c === sep) { out.push(cur); cur = ''; continue; }
    cur += c;
  }
  out.push(cur);
  return out;
}

function bad(msg: string): never {
  throw kdpError('KDP_BAD_REQUEST', `invalid field selector: ${msg}`);
}

/** Upstream fields.UnescapeValue: `\\`, `\,`, `\=` are escapes; a bare `,` or `=` is an error. */
function unescape(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === ',' || c === '=') bad(`unescaped ${c} in value "${s}"`);
    if (c !== '\\') { out += c; continue; }
    const n = s[i + 1];
    if (n !== '\\' && n !== ',' && n !== '=') bad(`invalid escape sequence \\${n ?? ''}`);
    out += n;
    i++;
  }
  return out;
}

function escape(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** Upstream splitTerm: the first operator found scanning left to right (`!=`, `==`, `=`). */
function parseTerm(term: string): FieldRequirement {
  for (let i = 0; i < term.length; i++) {
    for (const op of ['!=', '==', '='] as const) {
      if (!term.startsWith(op, i)) continue;
      return {
        field: term.slice(0, i).trim(),
        operator: op === '!=' ? '!=' : '=',
        value: unescape(term.slice(i + op.length)),
      };
    }
  }
  return bad(`invalid selector: '${term}'; can't understand '${term}'`);
}

/**
 * Parses a field selector for `resource` (plural, e.g. `pods`). `''` matches everything.
 * Throws KDP_BAD_REQUEST for malformed terms and for fields the resource cannot select on.
 */
export function parseFieldSelector(s: string, resource: string): FieldMatcher {
  const text = s.trim();
  const reqs = text === '' ? [] : splitUnescaped(text, ',').map((t) => parseTerm(t));
  const allowed = selectableFields(resource);
  for (const r of reqs) {
    if (!allowed.includes(r.field)) {
      throw kdpError('KDP_BAD_REQUEST', `field label not supported: ${r.field}`);
    }
  }
  return {
    requirements: reqs,
    empty: reqs.length === 0,
    matches: (obj) => reqs.every((r) => (fieldValue(obj,
      r.field) === r.value) === (r.operator === '=')),
    exactValue: (f) => reqs.find((r) => r.field === f && r.operator === '=')?.value,
    toString: () => reqs.map((r) => `${r.field}${r.operator}${escape(r.value)}`).join(','),
  };
}
