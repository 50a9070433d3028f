// What kube-proxy takes from a stored object. Upstream's proxier reads typed Go values that the
// API server validated; kdp's change trackers read JSON, which may hold whatever an older or
// bypassed validation let through. The trackers check every field a rule is built from with
// these helpers, once per Service or EndpointSlice change, so the compilers only ever see typed,
// in-range values, and one bad object costs its own rules, never the whole sync.
//
// What is skipped, as upstream's trackers skip what they cannot use: a Service with a bad
// service-wide field (every port of it), one bad port, one bad endpoint, or one bad entry of
// an address list (upstream "Skipping invalid IP"). Each skip is reported once per change.

import { isDNS1035Label, isDNS1123Label } from '../api/validation/names.js';
import type { Protocol } from './types.js';

/** One thing a change tracker skipped, and why. */
export interface InputProblem {
  readonly kind: 'Service' | 'EndpointSlice';
  readonly namespace: string;
  readonly name: string;
  /** The whole object (for this IP family), one port, one endpoint, or one list entry. */
  readonly skipped: 'object' | 'port' | 'endpoint' | 'entry';
  /** `<field path>: <why>`, e.g. `spec.ports[0].port: must be an integer in 1..65535, got 0`. */
  readonly message: string;
}

export type ProblemReporter = (problem: InputProblem) => void;

/** How much of a bad value a message shows. */
const SHOWN = 40;

/** A short JSON rendering of a bad value for a message. */
export function shown(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > SHOWN ? `${s.slice(0, SHOWN)}…` : s;
}

/** Optional JSON fields may be absent or null alike. */
export function absent(v: unknown): v is undefined | null {
  return v === undefined || v === null;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isInt(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

const PROTOCOLS: ReadonlySet<unknown> = new Set(['TCP', 'UDP', 'SCTP']);

export function isProtocol(v: unknown): v is Protocol {
  return PROTOCOLS.has(v);
}

/** `field: must be …, got <value>`, the one message shape every check uses. */
export function bad(field: string, must: string, got: unknown): string {
  return `${field}: must be ${must}, got ${shown(got)}`;
}

/** An optional integer field in `min..max`; undefined when fine. */
export function checkInt(field: string, v: unknown, min: number, max: number): string | undefined {
  if (absent(v) || isInt(v, min, max)) return undefined;
  return bad(field, `an integer in ${min}..${max}`, v);
}

/** An optional string field that must be one of `allowed`. */
export function checkEnum(field: string, v: unknown, allowed: readonly string[]):
  string | undefined {
  if (absent(v) || allowed.includes(v as string)) return undefined;
  return bad(field, `one of ${allowed.join(', ')}`, v);
}

/** An optional field that must be a string. */
export function checkString(field: string, v: unknown): string | undefined {
  return absent(v) || typeof v === 'string' ? undefined : bad(field, 'a string', v);
}

/** An optional field that must be a list. */
export function checkList(field: string, v: unknown): string | undefined {
  return absent(v) || Array.isArray(v) ? undefined : bad(field, 'a list', v);
}

/**
 * Names already found valid: namespaces and port names repeat across thousands of objects, so
 * most checks skip the regular expression. Bounded; emptied when full.
 */
const KNOWN_LABELS = new Set<string>();
const KNOWN_LIMIT = 4096;

function isLabel(v: unknown, check: (s: string) => string[]): v is string {
  if (typeof v !== 'string') return false;
  if (KNOWN_LABELS.has(v)) return true;
  if (check(v).length > 0) return false;
  if (KNOWN_LABELS.size >= KNOWN_LIMIT) KNOWN_LABELS.clear();
  // Kept only when it starts with a letter: then it is both an RFC 1123 and an RFC 1035 label,
  // and one set serves both checks.
  const c = v.charCodeAt(0);
  if (c >= 97 && c <= 122) KNOWN_LABELS.add(v);
  return true;
}

/** Namespaces are RFC 1123 labels, Service names RFC 1035 labels (they end up in comments). */
export function checkObjectName(kind: 'Service' | 'EndpointSlice', ns: unknown, name: unknown):
  string | undefined {
  if (!isLabel(ns, isDNS1123Label)) return bad('metadata.namespace', 'an RFC 1123 label', ns);
  const nameOk = kind === 'Service' ? isLabel(name, isDNS1035Label)
    : typeof name === 'string' && name.length > 0 && name.length <= 253;
  return nameOk ? undefined : bad('metadata.name', kind === 'Service'
    ? 'an RFC 1035 label' : 'a non-empty name', name);
}

/** A port name is '' (or absent) or an RFC 1123 label, as upstream's Service and slice checks. */
export function isPortName(v: unknown): boolean {
  return absent(v) || v === '' || isLabel(v, isDNS1123Label);
}

export function checkPortName(field: string, v: unknown): string | undefined {
  return isPortName(v) ? undefined : bad(field, 'an RFC 1123 label', v);
}
