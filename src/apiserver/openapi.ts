// kdp's OpenAPI: upstream's v1.33 schemas (openapi/k8s-openapi.json.gz) for the group versions
// this server serves, as `/openapi/v3` documents and the `/openapi/v2` Swagger document (JSON
// or protobuf). Everything is built on first request and kept: a server that is never asked
// never reads the data.

import type { ResourceCatalog } from './resource-types.js';
import { sharedOpenApiData } from './openapi/unknown-fields.js';
import type { OpenApiData } from './openapi/data.js';
import { buildOpenApiV2 } from './openapi/v2.js';
import { encodeOpenApiV2 } from './openapi/v2-proto.js';
import { buildOpenApiV3, etagOf } from './openapi/v3.js';
import type { OpenApiDoc, OpenApiV3 } from './openapi/v3.js';

export interface OpenApiDocs {
  /** The `/openapi/v3` index and its documents. */
  v3(): OpenApiV3;
  v2Json(): OpenApiDoc;
  v2Proto(): OpenApiDoc;
}

function once<T>(f: () => T): () => T {
  let v: { value: T } | undefined;
  return () => (v ??= { value: f() }).value;
}

export function buildOpenApi(cat: ResourceCatalog, gitVersion: string,
  load: () => OpenApiData = sharedOpenApiData): OpenApiDocs {
  const data = once(load);
  const v2 = once(() => buildOpenApiV2(data(), cat, gitVersion));
  const doc = (body: Buffer): OpenApiDoc => ({ body, etag: etagOf(body) });
  return {
    v3: once(() => buildOpenApiV3(data(), cat, gitVersion)),
    v2Json: once(() => doc(Buffer.from(JSON.stringify(v2())))),
    v2Proto: once(() => doc(encodeOpenApiV2(v2()))),
  };
}
