// A minimal OpenAPI: `/openapi/v3` lists one document per group version; each declares, for
// every kind, PATCH operations with the `fieldValidation` parameter (all kubectl's query-param
// verifier checks, so it leaves validation to the server). No request bodies or schemas, on
// purpose: with them kubectl would try to compute patches from a schema it cannot find.

import { createHash } from 'node:crypto';
import type { ResourceCatalog } from './resource-types.js';

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

export interface OpenApiDocs {
  index: unknown;
  /** Keyed by `api/v1`, `apis/apps/v1`. */
  docs: Map<string, unknown>;
}

export function buildOpenApi(cat: ResourceCatalog, gitVersion: string): OpenApiDocs {
  const docs = new Map<string, unknown>();
  const gvs = [...new Set(cat.all.map((r) => `${r.group}|${r.version}`))];
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const gv of gvs) {
    const [group, version] = gv.split('|') as [string, string];
    const ops: Record<string, unknown> = {};
    for (const r of cat.all.filter((x) => x.group === group && x.version === version)) {
      const patch = { patch: {
        'x-kubernetes-group-version-kind': { group, version, kind: r.kind },
        parameters: ['fieldValidation', 'fieldManager'].map((name) =>
          ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } })),
        responses: { '200': { description: 'OK' } },
      } };
      const base = `/${gvPath(group, version)}`;
      if (r.namespaced) ops[`${base}/namespaces/{namespace}/${r.resource}/{name}`] = patch;
      else ops[`${base}/${r.resource}/{name}`] = patch;
    }
    const info = { title: 'Kubernetes', version: gitVersion };
    const doc = { openapi: '3.0.0', info, paths: ops };
    const key = gvPath(group, version);
    docs.set(key, doc);
    const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 32)
      .toUpperCase();
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { index: { paths }, docs };
}
