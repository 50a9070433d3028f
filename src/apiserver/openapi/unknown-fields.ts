// Server-side field validation of unknown fields, as upstream's strict decoding reports them:
// a body's fields that its kind's upstream schema does not declare, by path in the decoder's
// spelling (`spec.containers[0].bogus`; map keys and fields joined by dots), in document order.
// Schemas without properties (RawExtension, FieldsV1, preserve-unknown-fields) accept anything.

import { readOpenApiData } from './data.js';
import type { JsonObject, OpenApiData } from './data.js';
import { buildPatchMetaSource } from './patch-meta.js';
import type { PatchMetaSource } from './patch-meta.js';
import { SCHEMA_REF } from './v3.js';

const isObj = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

interface Node {
  readonly props?: ReadonlyMap<string, JsonObject>;
  readonly extra?: JsonObject;
  readonly items?: JsonObject;
}

export interface CheckOptions {
  /** Delete the unknown fields found (upstream's decoder drops them). */
  readonly prune?: boolean;
  /** `obj` is a merge or strategic patch: `$` directives and nulls (deletions) are not fields. */
  readonly patch?: boolean;
}

export interface FieldChecker {
  /** Unknown field paths of `obj` as kind group/version/kind; [] when the kind has no schema. */
  unknownFields(group: string, version: string, kind: string, obj: unknown,
    opts?: CheckOptions): string[];
}

export function buildFieldChecker(data: OpenApiData): FieldChecker {
  const byGvk = new Map<string, JsonObject>();
  for (const s of Object.values(data.schemas)) {
    const gvks = s['x-kubernetes-group-version-kind'];
    if (!Array.isArray(gvks)) continue;
    for (const g of gvks) {
      if (isObj(g)) byGvk.set(`${String(g.group)}/${String(g.version)}/${String(g.kind)}`, s);
    }
  }
  const deref = (s: JsonObject): JsonObject => {
    for (let i = 0; i < 20; i++) {
      const ref = typeof s.$ref === 'string' ? s.$ref
        : Array.isArray(s.allOf) && isObj(s.allOf[0]) && typeof s.allOf[0].$ref === 'string'
          ? s.allOf[0].$ref : undefined;
      if (!ref?.startsWith(SCHEMA_REF)) return s;
      const next = data.schemas[ref.slice(SCHEMA_REF.length)];
      if (!next) return s;
      s = next;
    }
    return s;
  };
  // Each schema object compiled once, on first use: references resolved, properties in a Map.
  const compiled = new WeakMap<JsonObject, Node>();
  const node = (schema: JsonObject): Node => {
    let n = compiled.get(schema);
    if (n) return n;
    const s = deref(schema);
    n = compiled.get(s);
    if (!n) {
      const props = isObj(s.properties) ? s.properties : undefined;
      n = {
        props: props ? new Map(Object.entries(props).filter(([, p]) => isObj(p))
          .map(([k, p]) => [k, p as JsonObject])) : undefined,
        extra: isObj(s.additionalProperties) ? s.additionalProperties : undefined,
        items: isObj(s.items) ? s.items : undefined,
      };
      compiled.set(s, n);
    }
    compiled.set(schema, n);
    return n;
  };
  const walk = (schema: JsonObject, v: unknown, path: string, out: string[], depth: number,
    o: CheckOptions) => {
    if (depth > 100 || v === null || typeof v !== 'object') return;
    const n = node(schema);
    if (Array.isArray(v)) {
      if (!n.items) return;
      for (let i = 0; i < v.length; i++) walk(n.items, v[i], `${path}[${i}]`, out, depth + 1, o);
      return;
    }
    if (!n.props && !n.extra) return;
    for (const k in v) {
      const x = (v as JsonObject)[k];
      const p = n.props?.get(k) ?? n.extra;
      if (p) {
        if (x !== null && typeof x === 'object') {
          walk(p, x, path ? `${path}.${k}` : k, out, depth + 1, o);
        }
      } else if (!o.patch || (!k.startsWith('$') && x !== null)) {
        out.push(path ? `${path}.${k}` : k);
        if (o.prune) delete (v as JsonObject)[k];
      }
    }
  };
  return {
    unknownFields(group, version, kind, obj, opts = {}) {
      const s = byGvk.get(`${group}/${version}/${kind}`);
      const out: string[] = [];
      if (s) walk(s, obj, '', out, 0, opts);
      return out;
    },
  };
}

/** `strict decoding error: unknown field "a", unknown field "b"` (apimachinery's wording). */
export function strictDecodingMessage(fields: readonly string[]): string {
  return `strict decoding error: ${fields.map((f) => `unknown field "${f}"`).join(', ')}`;
}

let shared: { data: OpenApiData; checker?: FieldChecker; patchMeta?: PatchMetaSource } | undefined;

/**
 * The upstream data file, read once per process and shared by every server in it (read-only;
 * the API servers' OpenAPI documents and their field checks use the same copy).
 */
export function sharedOpenApiData(): OpenApiData {
  shared ??= { data: readOpenApiData() };
  return shared.data;
}

export function sharedFieldChecker(): FieldChecker {
  const s = shared ?? (shared = { data: readOpenApiData() });
  return (s.checker ??= buildFieldChecker(s.data));
}

/** Strategic-merge-patch metadata from the same shared data. */
export function sharedPatchMeta(): PatchMetaSource {
  const s = shared ?? (shared = { data: readOpenApiData() });
  return (s.patchMeta ??= buildPatchMetaSource(s.data));
}
