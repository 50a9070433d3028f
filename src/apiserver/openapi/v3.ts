// OpenAPI v3 documents as kube-apiserver serves them: `/openapi/v3` indexes one document per
// group version with `?hash=<ETag>`; each document holds upstream's paths for the resources
// this server serves and every component schema they reach (with upstream's extensions:
// x-kubernetes-group-version-kind, patch strategies and merge keys, list types, unions), which
// kubectl uses for `explain`, client-side validation and computing strategic merge patches.

import { createHash } from 'node:crypto';
import type { ResourceCatalog } from '../resource-types.js';
import { collectRefs } from './data.js';
import type { JsonObject, OpenApiData } from './data.js';

export const SCHEMA_REF = '#/components/schemas/';

/** A served document: its bytes and upstream's ETag (sha512, upper-case hex). */
export interface OpenApiDoc {
  readonly body: Buffer;
  readonly etag: string;
}

export function etagOf(body: Buffer): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

export function gvKey(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/**
 * Whether an upstream path belongs to a served resource of group version `key`: the group
 * version's root, or `[watch/][namespaces/{namespace}/]<resource>[/{name}[/<subresource>...]]`
 * for a served resource and, if named, a subresource it serves.
 */
export function isServedPath(cat: ResourceCatalog, key: string, path: string): boolean {
  const prefix = `/${key}/`;
  if (!path.startsWith(prefix)) return false;
  let segs = path.slice(prefix.length).split('/').filter((s) => s !== '');
  if (segs.length === 0) return true;
  if (segs[0] === 'watch') segs = segs.slice(1);
  if (segs[0] === 'namespaces' && segs[1] === '{namespace}' && segs.length > 2) segs = segs.slice(2);
  const [group, version] = key.startsWith('apis/') ? key.slice(5).split('/') : ['', key.slice(4)];
  const r = segs[0] === undefined ? undefined : cat.find(group!, version!, segs[0]);
  if (!r) return false;
  const sub = segs[1] === '{name}' ? segs[2] : undefined;
  return sub === undefined || r.subresources.some((x) => x.name === sub);
}

/** The paths of `key` kdp serves, and the schema names they reach (transitively). */
export function servedParts(data: OpenApiData, cat: ResourceCatalog, key: string):
  { paths: Record<string, JsonObject>; schemas: string[] } {
  const gv = data.gvs[key];
  const paths: Record<string, JsonObject> = {};
  if (!gv) return { paths, schemas: [] };
  for (const [p, item] of Object.entries(gv.paths)) if (isServedPath(cat, key, p)) paths[p] = item;
  const seen = new Set<string>();
  const todo = new Set<string>();
  collectRefs(paths, SCHEMA_REF, todo);
  while (todo.size > 0) {
    const [name] = todo;
    todo.delete(name!);
    if (seen.has(name!) || !data.schemas[name!]) continue;
    seen.add(name!);
    const more = new Set<string>();
    collectRefs(data.schemas[name!], SCHEMA_REF, more);
    for (const m of more) if (!seen.has(m)) todo.add(m);
  }
  return { paths, schemas: [...seen].sort() };
}

export interface OpenApiV3 {
  /** The `/openapi/v3` index. */
  readonly index: OpenApiDoc;
  /** Keyed `api/v1`, `apis/apps/v1`. */
  readonly docs: ReadonlyMap<string, OpenApiDoc>;
}

/** One document per served group version that upstream's data covers. */
export function buildOpenApiV3(data: OpenApiData, cat: ResourceCatalog, gitVersion: string):
  OpenApiV3 {
  const keys = [...new Set(cat.all.map((r) => gvKey(r.group, r.version)))].sort();
  const docs = new Map<string, OpenApiDoc>();
  const index: Record<string, { serverRelativeURL: string }> = {};
  for (const key of keys) {
    if (!data.gvs[key]) continue;
    const { paths, schemas } = servedParts(data, cat, key);
    const doc = {
      openapi: '3.0.0', info: { title: 'Kubernetes', version: gitVersion }, paths,
      components: {
        schemas: Object.fromEntries(schemas.map((n) => [n, data.schemas[n]])),
        securitySchemes: data.securitySchemes,
      },
    };
    const body = Buffer.from(JSON.stringify(doc));
    const etag = etagOf(body);
    docs.set(key, { body, etag });
    index[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${etag}` };
  }
  const body = Buffer.from(JSON.stringify({ paths: index }));
  return { index: { body, etag: etagOf(body) }, docs };
}
