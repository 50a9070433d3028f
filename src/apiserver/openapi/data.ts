// The upstream OpenAPI data kdp serves (k8s-openapi.json.gz beside this file, written by
// scripts/openapi-extract.ts from upstream's generated v1.33 documents; Apache-2.0, provenance
// inside). Read and decompressed on first use, so a server that is never asked pays nothing.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export type JsonObject = { [key: string]: unknown };

/** One group version's upstream document, less its component schemas (kept once, by name). */
export interface GroupVersionData {
  readonly paths: { readonly [path: string]: JsonObject };
  readonly schemas: readonly string[];
}

export interface OpenApiData {
  readonly provenance: string;
  readonly securitySchemes: JsonObject;
  /** Keyed `api/v1`, `apis/apps/v1`. */
  readonly gvs: { readonly [key: string]: GroupVersionData };
  readonly schemas: { readonly [name: string]: JsonObject };
}

export const OPENAPI_DATA_FILE = fileURLToPath(new URL('./k8s-openapi.json.gz', import.meta.url));

export function readOpenApiData(file: string = OPENAPI_DATA_FILE): OpenApiData {
  return JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as OpenApiData;
}

/** `#/components/schemas/X` and `#/definitions/X` references inside a value, by name. */
export function collectRefs(value: unknown, prefix: string, out: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, prefix, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(prefix)) out.add(v.slice(prefix.length));
      else collectRefs(v, prefix, out);
    }
  }
}
