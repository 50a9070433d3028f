// Compiles the declarative type tables (one per kind, after upstream's OpenAPI schema) into
// checkers that decode a JSON value as Go's encoding/json would decode it into the typed
// struct: the first mismatch in document order, described as Go describes it. Unknown fields
// are not errors (upstream's default, non-strict decoding): dropped from `$complete` tables,
// kept elsewhere (kdp's tables omit some rarely used upstream fields); nothing outside the
// table is walked.
// Decoding nulls: a struct field's null is dropped (a Time's kept), an array element's or map
// value's becomes the type's zero value, so later code never meets a null where a value belongs.
//
// Type expressions: `string`, `bool`, `int32`, `int64`, `float64`, `byte` ([]byte, base64),
// `quantity` (resource.Quantity), `intstr` (IntOrString), `time` (metav1.Time: a string),
// `any` (not checked), `[]T`, `map[string]T`, or the name of a table entry (a struct, or a
// named type such as `ResourceList: 'map[string]quantity'`).

import { base64ErrorOffset } from './base64.js';

/**
 * A struct: JSON field → type expression; `$go` overrides the Go type name (`v1.<key>`);
 * `$complete` says the table lists every upstream field, so decoding drops any other field,
 * as Go's decoder does (tables without it keep fields they do not list).
 */
export type StructDef = { readonly [field: string]: string };
export type Defs = { readonly [name: string]: StructDef | string };

/** One step of the path to a mismatch. */
export type Seg =
  | { readonly k: 'field'; readonly name: string; readonly struct: string }
  | { readonly k: 'index'; readonly i: number }
  | { readonly k: 'key'; readonly key: string };

/** What Go's decoder would refuse; `segs` is filled in from the outside in as it unwinds. */
export interface Mismatch {
  /** Go's description of the JSON value: `string`, `number 1.5`, `array`, `object`, `bool`. */
  readonly value: string;
  /** Go type the value was decoded into: `int32`, `map[string]string`, `v1.PodSpec`. */
  readonly type: string;
  /** A whole message from a type's own decoder (base64, quantity), used as is. */
  readonly raw?: string;
  readonly segs: Seg[];
}

export interface Node {
  readonly goType: string;
  /** Checks a non-null value; with `mutate`, nulls inside are decoded (dropped or zeroed). */
  check(v: unknown, mutate: boolean): Mismatch | undefined;
  /** The value Go decodes `null` to inside an array or map. */
  zero(): unknown;
}

export const QUANTITY_FORMAT = 'quantities must match the regular expression ' +
  '\'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'';
const QUANTITY_RE = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const INT32 = 2 ** 31;
const INT64 = 2 ** 63;

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const miss = (value: string, type: string): Mismatch => ({ value, type, segs: [] });

function leaf(goType: string, ok: (v: unknown) => boolean, zero: unknown): Node {
  return { goType, zero: () => zero,
    check: (v) => (ok(v) ? undefined : miss(describe(v), goType)) };
}

function integer(goType: string, bound: number): Node {
  return {
    goType, zero: () => 0,
    check(v) {
      if (typeof v !== 'number') return miss(describe(v), goType);
      if (Number.isInteger(v) && v >= -bound && v < bound) return undefined;
      return miss(Number.isFinite(v) ? `number ${v}` : 'number', goType);
    },
  };
}

const BYTES: Node = {
  goType: '[]uint8', zero: () => '',
  check(v) {
    if (typeof v !== 'string') return miss(describe(v), '[]uint8');
    const at = base64ErrorOffset(v);
    return at < 0 ? undefined :
      { value: 'string', type: '[]uint8', raw: `illegal base64 data at input byte ${at}`,
        segs: [] };
  },
};

/** resource.Quantity's UnmarshalJSON: a string or number in the quantity grammar. */
const QUANTITY: Node = {
  goType: 'resource.Quantity', zero: () => '0',
  check(v) {
    if (typeof v === 'number' && Number.isFinite(v)) return undefined;
    if (typeof v === 'string' && QUANTITY_RE.test(v.trim())) return undefined;
    return { value: describe(v), type: 'resource.Quantity', raw: QUANTITY_FORMAT, segs: [] };
  },
};

/** IntOrString's UnmarshalJSON: a string, or else decoded as an int32. */
const INT_OR_STRING: Node = {
  goType: 'int32', zero: () => 0,
  check: (v) => (typeof v === 'string' ? undefined : INT32_NODE.check(v, false)),
};
const INT32_NODE = integer('int32', INT32);

/** metav1.Time: a string; a null one is kept (Go writes a zero Time as null). */
const TIME = leaf('string', (v) => typeof v === 'string', null);

const PRIMITIVES: Record<string, Node> = {
  string: leaf('string', (v) => typeof v === 'string', ''),
  time: TIME,
  bool: leaf('bool', (v) => typeof v === 'boolean', false),
  float64: leaf('float64', (v) => typeof v === 'number' && Number.isFinite(v), 0),
  int32: INT32_NODE,
  int64: integer('int64', INT64),
  byte: BYTES,
  quantity: QUANTITY,
  intstr: INT_OR_STRING,
  any: { goType: 'interface {}', zero: () => null, check: () => undefined },
};

function arrayOf(el: Node, goType = `[]${el.goType}`): Node {
  return {
    goType, zero: () => [],
    check(v, mutate) {
      if (!Array.isArray(v)) return miss(describe(v), goType);
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (x == null) { if (mutate) v[i] = el.zero(); continue; }
        const m = el.check(x, mutate);
        if (m) { m.segs.unshift({ k: 'index', i }); return m; }
      }
      return undefined;
    },
  };
}

function mapOf(el: Node, goType = `map[string]${el.goType}`): Node {
  return {
    goType, zero: () => ({}),
    check(v, mutate) {
      if (!isObject(v)) return miss(describe(v), goType);
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        const x = v[key];
        if (x == null) { if (mutate) v[key] = el.zero(); continue; }
        const m = el.check(x, mutate);
        if (m) { m.segs.unshift({ k: 'key', key }); return m; }
      }
      return undefined;
    },
  };
}

interface StructNode extends Node { fields: Map<string, Node> }

function structNode(goType: string, complete: boolean): StructNode {
  const short = goType.slice(goType.lastIndexOf('.') + 1);
  const fields = new Map<string, Node>();
  return {
    goType, fields, zero: () => ({}),
    check(v, mutate) {
      if (!isObject(v)) return miss(describe(v), goType);
      // for-in (no key array: this is the create path's hot loop); own keys only.
      for (const name in v) {
        if (!Object.hasOwn(v, name)) continue;
        const node = fields.get(name);
        if (!node) { if (mutate && complete) delete v[name]; continue; }
        const x = v[name];
        if (x === undefined) continue;
        if (x === null) { if (mutate && node !== TIME) delete v[name]; continue; }
        const m = node.check(x, mutate);
        if (m) { m.segs.unshift({ k: 'field', name, struct: short }); return m; }
      }
      return undefined;
    },
  };
}

/** Compiles every entry of `defs`; returns a resolver from a type expression to its checker. */
export function compileDefs(defs: Defs): (expr: string) => Node {
  const nodes = new Map<string, Node>();
  const resolve = (expr: string): Node => {
    const known = PRIMITIVES[expr] ?? nodes.get(expr);
    if (known) return known;
    if (expr.startsWith('[]')) return cache(expr, arrayOf(resolve(expr.slice(2))));
    if (expr.startsWith('map[string]')) {
      return cache(expr, mapOf(resolve(expr.slice('map[string]'.length))));
    }
    const def = defs[expr];
    if (def === undefined) throw new Error(`schema: unknown type ${expr}`);
    if (typeof def === 'string') {
      return cache(expr, def.startsWith('map[string]') ?
        mapOf(resolve(def.slice('map[string]'.length)), `v1.${expr}`) : resolve(def));
    }
    const node = structNode(def.$go ?? `v1.${expr}`, def.$complete === 'true');
    nodes.set(expr, node);
    for (const [field, t] of Object.entries(def)) {
      if (!field.startsWith('$')) node.fields.set(field, resolve(t));
    }
    return node;
  };
  const cache = (expr: string, n: Node): Node => { nodes.set(expr, n); return n; };
  for (const name of Object.keys(defs)) resolve(name);
  return resolve;
}
