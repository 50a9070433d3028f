// Validation shared by every kind: ObjectMeta (create and update), labels, annotations, label
// selectors, IPs and CIDRs, numeric ranges. Wording follows upstream apimachinery and
// pkg/apis/core/validation (v1.33).

import type { LabelSelector, ObjectMeta } from '../types.js';
import { parseCIDR, parseIP } from '../net.js';
import {
  type Cause, duplicate, formatValue, forbidden, immutable, invalid, required, tooLong, invalidEach,
} from './field-errors.js';
import {
  isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue,
} from './names.js';

/** Path helpers: `child('spec', 'ports')`, `index('spec.ports', 0)`. */
export const child = (p: string, c: string): string => (p ? `${p}.${c}` : c);
export const index = (p: string, i: number | string): string => `${p}[${i}]`;

/** A name check: (name, isPrefix) → messages; as upstream ValidateNameFunc. */
export type NameFn = (name: string, prefix: boolean) => string[];

/** generateName prefixes may end in '-' (upstream maskTrailingDash). */
function masked(name: string, prefix: boolean): string {
  return prefix && name.length > 1 && name.endsWith('-') ? `${name.slice(0, -1)}a` : name;
}

export const nameIsDNSSubdomain: NameFn = (n, p) => isDNS1123Subdomain(masked(n, p));
export const nameIsDNSLabel: NameFn = (n, p) => isDNS1123Label(masked(n, p));
export const nameIsDNS1035Label: NameFn = (n, p) => isDNS1035Label(masked(n, p));

/** RBAC names: path segments (upstream path.IsValidPathSegmentName). */
export const nameIsPathSegment: NameFn = (n, p) => {
  if (!p && (n === '.' || n === '..')) return [`may not be '${n}'`];
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (n.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
};

export function validateLabels(labels: Record<string, string> | undefined, path: string): Cause[] {
  const out: Cause[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    out.push(...invalidEach(path, k, isQualifiedName(k)));
    if (typeof v !== 'string') out.push(invalid(path, v, 'must be a string'));
    else out.push(...invalidEach(path, v, isValidLabelValue(v)));
  }
  return out;
}

const ANNOTATION_LIMIT = 256 * 1024;

export function validateAnnotations(ann: Record<string, string> | undefined, path: string)
  : Cause[] {
  const out: Cause[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(ann ?? {})) {
    out.push(...invalidEach(path, k, isQualifiedName(k.toLowerCase())));
    size += k.length + String(v).length;
  }
  if (size > ANNOTATION_LIMIT) out.push(tooLong(path, ANNOTATION_LIMIT));
  return out;
}

const STANDARD_FINALIZERS = ['kubernetes', 'orphan', 'foregroundDeletion'];

export function validateFinalizerName(name: string, path: string): Cause[] {
  const out = isQualifiedName(name).map((m) => invalid(path, name, m));
  if (out.length === 0 && !name.includes('/') && !STANDARD_FINALIZERS.includes(name)) {
    out.push(invalid(path, name,
      'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return out;
}

function validateOwnerReferences(meta: ObjectMeta, path: string): Cause[] {
  const out: Cause[] = [];
  let controllers = 0;
  (meta.ownerReferences ?? []).forEach((r, i) => {
    const p = index(path, i);
    if (!r.apiVersion) out.push(invalid(child(p, 'apiVersion'), r.apiVersion ?? '',
      'version must not be empty'));
    if (!r.kind) out.push(invalid(child(p, 'kind'), r.kind ?? '', 'kind must not be empty'));
    if (!r.name) out.push(invalid(child(p, 'name'), r.name ?? '', 'name must not be empty'));
    if (!r.uid) out.push(invalid(child(p, 'uid'), r.uid ?? '', 'uid must not be empty'));
    if (r.controller) controllers++;
  });
  if (controllers > 1) {
    out.push(invalid(path, meta.ownerReferences?.filter((r) => r.controller).map((r) => r.name),
      'Only one reference can have Controller set to true'));
  }
  return out;
}

export interface MetaOptions {
  readonly namespaced: boolean;
  readonly nameFn: NameFn;
}

/** Upstream ValidateObjectMeta. */
export function validateObjectMeta(meta: ObjectMeta | undefined, opts: MetaOptions,
  path = 'metadata'): Cause[] {
  const m = meta ?? {};
  const out: Cause[] = [];
  if (m.generateName) {
    out.push(...invalidEach(child(path, 'generateName'), m.generateName,
      opts.nameFn(m.generateName, true)));
  }
  if (!m.name) {
    if (!m.generateName) {
      out.push(required(child(path, 'name'), 'name or generateName is required'));
    }
  } else {
    out.push(...invalidEach(child(path, 'name'), m.name, opts.nameFn(m.name, false)));
  }
  if (opts.namespaced) {
    if (!m.namespace) out.push(required(child(path, 'namespace'), ''));
    else {
      out.push(...invalidEach(child(path, 'namespace'), m.namespace, isDNS1123Label(m.namespace)));
    }
  } else if (m.namespace) {
    out.push(forbidden(child(path, 'namespace'), 'not allowed on this type'));
  }
  if (m.generation !== undefined && m.generation < 0) {
    out.push(invalid(child(path, 'generation'), m.generation, 'must be a non-negative integer'));
  }
  out.push(...validateLabels(m.labels, child(path, 'labels')));
  out.push(...validateAnnotations(m.annotations, child(path, 'annotations')));
  out.push(...validateOwnerReferences(m, child(path, 'ownerReferences')));
  (m.finalizers ?? []).forEach((f, i) => {
    out.push(...validateFinalizerName(f, index(child(path, 'finalizers'), i)));
  });
  return out;
}

/** Upstream ValidateObjectMetaUpdate: identity fields are immutable. */
export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta, path = 'metadata')
  : Cause[] {
  const out: Cause[] = [];
  for (const f of ['name', 'namespace', 'uid', 'creationTimestamp'] as const) {
    const a = meta[f] ?? '';
    const b = old[f] ?? '';
    if (a !== b && !(f !== 'name' && f !== 'namespace' && a === '')) {
      out.push(immutable(child(path, f), a));
    }
  }
  if (old.deletionTimestamp) {
    const added = (meta.finalizers ?? []).filter((f) => !(old.finalizers ?? []).includes(f));
    if (added.length > 0) {
      out.push(forbidden(child(path, 'finalizers'), 'no new finalizers can be added if the '
        + `object is being deleted, found new finalizers ${formatValue(added)}`));
    }
  }
  return out;
}

/** Upstream metav1validation.ValidateLabelSelector. */
export function validateLabelSelector(sel: LabelSelector | undefined | null, path: string)
  : Cause[] {
  if (!sel) return [];
  const out = validateLabels(sel.matchLabels, child(path, 'matchLabels'));
  (sel.matchExpressions ?? []).forEach((r, i) => {
    const p = index(child(path, 'matchExpressions'), i);
    const values = r.values ?? [];
    if (r.operator === 'In' || r.operator === 'NotIn') {
      if (values.length === 0) {
        out.push(required(child(p, 'values'),
          "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (r.operator === 'Exists' || r.operator === 'DoesNotExist') {
      if (values.length > 0) {
        out.push(forbidden(child(p, 'values'),
          "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else {
      out.push(invalid(child(p, 'operator'), r.operator, 'not a valid selector operator'));
    }
    out.push(...invalidEach(child(p, 'key'), r.key, isQualifiedName(r.key ?? '')));
    values.forEach((v, j) => {
      out.push(...invalidEach(index(child(p, 'values'), j), v, isValidLabelValue(v)));
    });
  });
  return out;
}

export const IP_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
export const CIDR_MSG = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

export function validateIP(value: string, path: string): Cause[] {
  return parseIP(value) ? [] : [invalid(path, value, IP_MSG)];
}

export function validateCIDR(value: string, path: string): Cause[] {
  return parseCIDR(value) ? [] : [invalid(path, value, CIDR_MSG)];
}

/** Upstream ValidateNonSpecialIP: no unspecified, loopback or link-local addresses. */
export function validateNonSpecialIP(value: string, path: string): Cause[] {
  const ip = parseIP(value);
  if (!ip) return [invalid(path, value, IP_MSG)];
  const v4 = ip.family === 'IPv4';
  const v = ip.value;
  if (v === 0n) return [invalid(path, value, `may not be unspecified (${value})`)];
  if (v4 ? v >> 24n === 127n : v === 1n) {
    return [invalid(path, value, 'may not be in the loopback range (127.0.0.0/8, ::1/128)')];
  }
  if (v4 ? v >> 16n === 0xa9fen : v >> 118n === 0x3fan) {
    return [invalid(path, value, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)')];
  }
  if (v4 ? v >> 8n === 0xe00000n : v >> 120n === 0xffn && ((v >> 112n) & 0xfn) === 2n) {
    return [invalid(path, value,
      'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)')];
  }
  return [];
}

export function nonNegative(value: number | undefined, path: string): Cause[] {
  return value !== undefined && value < 0
    ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
}

export function inRange(value: number | undefined, lo: number, hi: number, path: string): Cause[] {
  return value !== undefined && (value < lo || value > hi)
    ? [invalid(path, value, `must be between ${lo} and ${hi}, inclusive`)] : [];
}

/** Duplicate-name check over a list: returns causes for the later duplicates. */
export function uniqueNames<T>(items: readonly T[], name: (t: T) => string | undefined,
  path: (i: number) => string): Cause[] {
  const seen = new Set<string>();
  const out: Cause[] = [];
  items.forEach((t, i) => {
    const n = name(t);
    if (n === undefined || n === '') return;
    if (seen.has(n)) out.push(duplicate(path(i), n));
    seen.add(n);
  });
  return out;
}

function isEmptyish(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

/**
 * Upstream apiequality.Semantic.DeepEqual over JSON values: key order is ignored and empty
 * arrays/objects equal absent ones (as nil and empty slices/maps compare equal upstream).
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isEmptyish(a) && isEmptyish(b)) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    return (a ?? undefined) === (b ?? undefined);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!deepEqual(ao[k], bo[k])) return false;
  return true;
}

/** Upstream ValidateImmutableField. */
export function validateImmutable(value: unknown, old: unknown, path: string): Cause[] {
  return deepEqual(value, old) ? [] : [immutable(path, value)];
}
