// Strategic-merge-patch metadata from the upstream schemas, as kubectl reads it to compute a
// patch and as upstream's server applies one (strategicpatch.PatchMetaFromOpenAPI): a list
// field's `x-kubernetes-patch-strategy` (merge, retainKeys, both) and
// `x-kubernetes-patch-merge-key`, walked field by field from a kind's schema. A field the
// schema does not declare has no strategy (its lists are replaced).

import type { JsonObject, OpenApiData } from './data.js';
import { SCHEMA_REF } from './v3.js';

const isObj = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** Patch metadata at one place in an object. */
export interface PatchMeta {
  /** `merge`, `retainKeys`, `merge,retainKeys`, or '' (replace). */
  readonly strategy: string;
  readonly mergeKey?: string;
  /** A field of this object, or a value of this map. */
  field(name: string): PatchMeta;
  /** An element of this list. */
  readonly items: PatchMeta;
}

/** What the schema does not describe: no strategy anywhere below. */
export const OPAQUE_META: PatchMeta = {
  strategy: '', field: () => OPAQUE_META, get items() { return OPAQUE_META; } };

export interface PatchMetaSource {
  /** The kind's root metadata; undefined when no schema carries that group-version-kind. */
  forKind(apiVersion: string, kind: string): PatchMeta | undefined;
}

export function buildPatchMetaSource(data: OpenApiData): PatchMetaSource {
  const byGvk = new Map<string, JsonObject>();
  for (const s of Object.values(data.schemas)) {
    const gvks = s['x-kubernetes-group-version-kind'];
    if (!Array.isArray(gvks)) continue;
    for (const g of gvks) {
      if (!isObj(g)) continue;
      const gv = g.group ? `${String(g.group)}/${String(g.version)}` : String(g.version);
      byGvk.set(`${gv}|${String(g.kind)}`, s);
    }
  }
  const deref = (s: JsonObject): JsonObject => {
    for (let i = 0; i < 20; i++) {
      const ref = typeof s.$ref === 'string' ? s.$ref
        : Array.isArray(s.allOf) && isObj(s.allOf[0]) && typeof s.allOf[0].$ref === 'string'
          ? s.allOf[0].$ref : undefined;
      const next = ref?.startsWith(SCHEMA_REF) ? data.schemas[ref.slice(SCHEMA_REF.length)] : undefined;
      if (!next) return s;
      s = next;
    }
    return s;
  };
  const metas = new WeakMap<JsonObject, PatchMeta>();
  const metaOf = (schema: JsonObject): PatchMeta => {
    const hit = metas.get(schema);
    if (hit) return hit;
    const own = schema;
    let body: JsonObject | undefined;
    const resolved = () => (body ??= deref(own));
    const fields = new Map<string, PatchMeta>();
    let items: PatchMeta | undefined;
    const m: PatchMeta = {
      strategy: typeof own['x-kubernetes-patch-strategy'] === 'string'
        ? own['x-kubernetes-patch-strategy'] : '',
      mergeKey: typeof own['x-kubernetes-patch-merge-key'] === 'string'
        ? own['x-kubernetes-patch-merge-key'] : undefined,
      field(name) {
        let f = fields.get(name);
        if (!f) {
          const s = resolved();
          const p = isObj(s.properties) && Object.hasOwn(s.properties, name)
            ? s.properties[name] : s.additionalProperties;
          f = isObj(p) ? metaOf(p) : OPAQUE_META;
          fields.set(name, f);
        }
        return f;
      },
      get items() {
        const s = resolved();
        return (items ??= isObj(s.items) ? metaOf(s.items) : OPAQUE_META);
      },
    };
    metas.set(schema, m);
    return m;
  };
  return {
    forKind(apiVersion, kind) {
      const s = byGvk.get(`${apiVersion}|${kind}`);
      return s ? metaOf(s) : undefined;
    },
  };
}
