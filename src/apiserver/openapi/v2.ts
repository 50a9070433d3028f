// The OpenAPI v2 (Swagger 2.0) document of `/openapi/v2`, derived from the same upstream v3
// data as kube-openapi's two builders derive both from one model: `$ref`s to `#/definitions/`,
// a reference's v3 wrapper (`allOf: [{$ref}]` with a default) back to a plain `$ref`, the v3
// `oneOf` of IntOrString and Quantity to `type: string`, request bodies to a `body` parameter,
// response content to `produces` and a schema. kubectl 1.27/1.28 read it (as protobuf) for
// `explain`, client-side validation and the `fieldValidation` parameter check.

import type { ResourceCatalog } from '../resource-types.js';
import type { JsonObject, OpenApiData } from './data.js';
import { gvKey, SCHEMA_REF, servedParts } from './v3.js';

const DEF_REF = '#/definitions/';
const isObj = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** A v3 schema as upstream's v2 document spells it. */
export function toV2Schema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toV2Schema);
  if (!isObj(s)) return s;
  const allOf = s.allOf;
  if (Array.isArray(allOf) && allOf.length === 1 && isObj(allOf[0]) && allOf[0].$ref) {
    const out: JsonObject = {};
    if (s.description !== undefined) out.description = s.description;
    out.$ref = (toV2Schema(allOf[0]) as JsonObject).$ref;
    for (const [k, v] of Object.entries(s)) {
      if (k.startsWith('x-')) out[k] = v;
    }
    return out;
  }
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === '$ref' && typeof v === 'string') {
      out.$ref = v.startsWith(SCHEMA_REF) ? DEF_REF + v.slice(SCHEMA_REF.length) : v;
    } else if (k === 'oneOf') {
      out.type = 'string';
    } else if (k === 'nullable') {
      continue;
    } else if (k === 'properties' && isObj(v)) {
      out.properties = Object.fromEntries(Object.entries(v).map(([n, p]) => [n, toV2Schema(p)]));
    } else if (k === 'items' || k === 'additionalProperties' || k === 'allOf' || k === 'not') {
      out[k] = toV2Schema(v);
    } else {
      out[k] = v;
    }
  }
  return out;
}

function toV2Parameter(p: JsonObject): JsonObject {
  const { schema, ...rest } = p;
  return isObj(schema) ? { ...rest, ...(toV2Schema(schema) as JsonObject) } : rest;
}

function contentTypes(content: unknown): string[] {
  return isObj(content) ? Object.keys(content) : [];
}

function firstSchema(content: unknown): unknown {
  if (!isObj(content)) return undefined;
  const first = Object.values(content)[0];
  return isObj(first) ? first.schema : undefined;
}

function toV2Operation(op: JsonObject): JsonObject {
  const out: JsonObject = {};
  const body = isObj(op.requestBody) ? op.requestBody : undefined;
  if (body) out.consumes = contentTypes(body.content);
  if (op.description !== undefined) out.description = op.description;
  out.operationId = op.operationId;
  const params: unknown[] = [];
  if (body) {
    params.push({ in: 'body', name: 'body', required: true,
      schema: toV2Schema(firstSchema(body.content)) });
  }
  for (const p of Array.isArray(op.parameters) ? op.parameters : []) {
    if (isObj(p)) params.push(toV2Parameter(p));
  }
  if (params.length > 0) out.parameters = params;
  const produces = new Set<string>();
  const responses: JsonObject = {};
  for (const [code, r] of Object.entries(isObj(op.responses) ? op.responses : {})) {
    if (!isObj(r)) continue;
    for (const t of contentTypes(r.content)) produces.add(t);
    const schema = firstSchema(r.content);
    responses[code] = { description: r.description,
      ...(schema !== undefined ? { schema: toV2Schema(schema) } : {}) };
  }
  if (produces.size > 0) out.produces = [...produces];
  out.responses = responses;
  out.schemes = ['https'];
  for (const [k, v] of Object.entries(op)) {
    if (k === 'tags' || k.startsWith('x-')) out[k] = v;
  }
  return out;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function toV2PathItem(item: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const m of METHODS) if (isObj(item[m])) out[m] = toV2Operation(item[m]);
  if (Array.isArray(item.parameters)) {
    out.parameters = item.parameters.filter(isObj).map(toV2Parameter);
  }
  return out;
}

/** The whole v2 document for every served group version upstream's data covers. */
export function buildOpenApiV2(data: OpenApiData, cat: ResourceCatalog, gitVersion: string):
  JsonObject {
  const keys = [...new Set(cat.all.map((r) => gvKey(r.group, r.version)))].sort();
  const paths: JsonObject = {};
  const names = new Set<string>();
  for (const key of keys) {
    const part = servedParts(data, cat, key);
    for (const [p, item] of Object.entries(part.paths)) paths[p] = toV2PathItem(item);
    for (const n of part.schemas) names.add(n);
  }
  const sortedPaths = Object.fromEntries(Object.keys(paths).sort().map((p) => [p, paths[p]]));
  const definitions = Object.fromEntries([...names].sort()
    .map((n) => [n, toV2Schema(data.schemas[n])]));
  return {
    swagger: '2.0', info: { title: 'Kubernetes', version: gitVersion }, paths: sortedPaths,
    definitions,
    securityDefinitions: { BearerToken: { description: 'Bearer Token authentication',
      in: 'header', name: 'authorization', type: 'apiKey' } },
    security: [{ BearerToken: [] }],
  };
}
