// Maps HTTP requests on `/api/*` and `/apis/*` to service calls and renders their answers
// (JSON objects, Tables, watch streams, log text).

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import type { ApiService, Target } from '../service.js';
import type { RequestContext } from '../rest/deps.js';
import type { IncludeObject } from '../table/index.js';
import { toTable } from '../table/index.js';
import { apiGroupDoc, apiResourceList } from '../discovery.js';
import { pathNotFound } from '../rest/errors.js';
import { encodingOf } from '../rest/codec.js';
import { decodeBody, unsupportedMediaType } from './body.js';
import { checkAccept, PATCH_TYPES, mediaType, wantsTable } from './media.js';
import { parseFieldSelector } from '../../api/field-selectors.js';
import { checkWatchOptions, listOptionsOf } from './list-options.js';
import { deleteOptionsOf, patchOptionCauses, writeOptionsOf } from './write-options.js';
import { checkUnknownFields, fieldValidationOf } from './field-validation.js';
import { parseResourceVersion, tooLargeResourceVersion } from '../rest/resource-version.js';
import { parsePath } from './path.js';
import type { ParsedPath } from './path.js';
import type { Query } from './query.js';
import { q, qBool, qInt } from './query.js';
import { buildWatchStream } from './watch-stream.js';
import type { LineCache } from './watch-stream.js';

/** What answering with one JSON document needs (a FastifyReply, or the fast lane's). */
export interface JsonReply {
  code(status: number): JsonReply;
  header(name: string, value: string): JsonReply;
  send(body: string): unknown;
}

/** What routing a resource request reads (a FastifyRequest, or the fast lane's). */
export interface ResourceRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>> & {
    'content-type'?: string; accept?: string; 'user-agent'?: string };
  readonly query: unknown;
  readonly body: unknown;
}

/** Sends `body` as JSON; a write's or read's answer reuses the text it was stored as. */
export function sendJson<R extends JsonReply>(reply: R, code: number, body: unknown): R {
  reply.code(code).header('content-type', 'application/json')
    .send(encodingOf(body) ?? JSON.stringify(body));
  return reply;
}

function includeObject(query: Query): IncludeObject {
  const v = q(query, 'includeObject');
  if (v === undefined || v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'Object' || v === 'None') return v;
  throw kdpError('KDP_BAD_REQUEST', `includeObject must be one of None, Metadata, Object`);
}

/** The field manager: the query's, else the User-Agent's product (upstream's default). */
function fieldManager(req: ResourceRequest, query: Query): string | undefined {
  const fm = q(query, 'fieldManager');
  if (fm) return fm;
  const ua = req.headers['user-agent'];
  return ua ? ua.split('/')[0]!.slice(0, 128) || undefined : undefined;
}

/** True for what only the Fastify route serves: watches and logs (streams). */
export function isStreamRequest(req: ResourceRequest, target: Target | undefined): boolean {
  if (req.method !== 'GET' || !target) return false;
  if (target.subresource) return target.subresource === 'log';
  return !!target.watch || qBool(req.query as Query, 'watch');
}

export async function handleResourceRequest(
  svc: ApiService, ctx: RequestContext, req: FastifyRequest, reply: FastifyReply,
  lines: LineCache,
): Promise<unknown> {
  const parsed = parsePath(svc.catalog, req.url);
  const t = parsed.kind === 'resource' ? parsed.target : undefined;
  if (t && isStreamRequest(req, t)) {
    const query = req.query as Query;
    if (t.subresource === 'log') return handleLog(svc, ctx, t, query, reply);
    checkAccept(req.headers.accept);
    return handleWatch(svc, ctx, t, query, wantsTable(req.headers.accept), reply, lines);
  }
  return handleJsonRequest(svc, ctx, req, reply, parsed);
}

/** Every resource request answered with one JSON document (not watches, not logs). */
export async function handleJsonRequest<R extends JsonReply>(
  svc: ApiService, ctx: RequestContext, req: ResourceRequest, reply: R,
  parsed: ParsedPath = parsePath(svc.catalog, req.url),
): Promise<unknown> {
  if (parsed.kind === 'invalid') throw pathNotFound();
  if (parsed.kind === 'badName') {
    throw kdpError('KDP_BAD_REQUEST', `invalid resource name ${JSON.stringify(parsed.name)}: ` +
      `[${parsed.why}]`);
  }
  if (parsed.kind === 'group' || parsed.kind === 'groupVersion') {
    if (req.method !== 'GET') throw pathNotFound();
    const doc = parsed.kind === 'group' ? apiGroupDoc(svc.catalog, parsed.group) :
      apiResourceList(svc.catalog, parsed.group, parsed.version);
    if (!doc) throw pathNotFound();
    return sendJson(reply, 200, doc);
  }
  const t = parsed.target;
  try {
    return await handleTarget(svc, ctx, t, req, reply);
  } catch (e) {
    if (!REQUEST_ERRORS.has((e as { code?: string }).code ?? '')) throw e;
    // Upstream authorizes before its handlers read the query, Accept or body: a caller who may
    // not make the call at all learns that (403, or 404/405) rather than what was malformed.
    // (After the service refused, this passes again and the refusal stands.)
    await svc.authorize(ctx, t, verbOf(req.method, t));
    throw e;
  }
}

/** Refusals of the request's own shape (query, media types, body). */
const REQUEST_ERRORS = new Set(['KDP_BAD_REQUEST', 'KDP_INVALID', 'KDP_NOT_ACCEPTABLE',
  'KDP_UNSUPPORTED_MEDIA_TYPE', 'KDP_TOO_LARGE']);

function verbOf(method: string, t: Target): string {
  switch (method) {
    case 'GET': return t.name ? 'get' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    default: return t.name ? 'delete' : 'deletecollection';
  }
}

async function handleTarget<R extends JsonReply>(
  svc: ApiService, ctx: RequestContext, t: Target, req: ResourceRequest, reply: R,
): Promise<unknown> {
  const query = req.query as Query;
  if (t.watch) throw kdpError('KDP_METHOD_NOT_ALLOWED', `${req.method} is not supported`);
  checkAccept(req.headers.accept);
  const table = wantsTable(req.headers.accept);
  switch (req.method) {
    case 'GET': return handleGet(svc, ctx, t, query, table, reply);
    case 'POST': {
      // No POST route names an object (go-restful answers 405); subresources may (binding).
      if (t.name && !t.subresource) {
        throw kdpError('KDP_METHOD_NOT_ALLOWED',
          'the server does not allow this method on the requested resource');
      }
      const opts = writeOptionsOf(query, 'CreateOptions');
      const body = decodeBody(req.headers['content-type'], req.body, true);
      const warning = unknownFields(svc, t, req, 'create', body);
      const out = await svc.create(ctx, t, body, { dryRun: opts.dryRun,
        fieldManager: fieldManager(req, query) });
      if (warning) reply.header('warning', warning);
      return sendJson(reply, 201, out);
    }
    case 'PUT': {
      const opts = writeOptionsOf(query, 'UpdateOptions');
      const body = decodeBody(req.headers['content-type'], req.body, true);
      const warning = unknownFields(svc, t, req, 'update', body);
      const out = await svc.update(ctx, t, body, { dryRun: opts.dryRun,
        fieldManager: fieldManager(req, query) });
      if (warning) reply.header('warning', warning);
      return sendJson(reply, out.created ? 201 : 200, out.obj);
    }
    case 'PATCH': {
      const mt = mediaType(req.headers['content-type']);
      const type = PATCH_TYPES[mt];
      if (!type) throw unsupportedMediaType(mt);
      const opts = writeOptionsOf(query, 'PatchOptions',
        patchOptionCauses(query, type === 'apply'));
      const body = decodeBody(req.headers['content-type'], req.body);
      if (body === undefined) throw kdpError('KDP_BAD_REQUEST', 'the patch body is empty');
      const warning = unknownFields(svc, t, req, type, body);
      const out = await svc.patch(ctx, t, type, body, { dryRun: opts.dryRun,
        fieldManager: type === 'apply' ? opts.fieldManager : fieldManager(req, query),
        force: qBool(query, 'force') });
      if (warning) reply.header('warning', warning);
      return sendJson(reply, out.created ? 201 : 200, out.obj);
    }
    case 'DELETE': {
      const body = decodeBody(req.headers['content-type'], req.body, true);
      const opts = deleteOptionsOf(body, query);
      if (!t.name) {
        return sendJson(reply, 200, await svc.deleteCollection(ctx, t, listOptionsOf(query),
          opts));
      }
      return sendJson(reply, 200, await svc.delete(ctx, t, opts));
    }
    default:
      throw kdpError('KDP_METHOD_NOT_ALLOWED', `${req.method} is not supported`);
  }
}

/** The unknown-field check of a write's body (field-validation.ts): a Warning value, or throws. */
function unknownFields(svc: ApiService, t: Target, req: ResourceRequest, op: string,
  body: unknown): string | undefined {
  const r = svc.catalog.find(t.group, t.version, t.resource);
  if (!r || !body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const ct = req.headers['content-type'] ?? '';
  return checkUnknownFields({ resource: r, subresource: t.subresource, op, body,
    directive: fieldValidationOf(req.query as Query), yaml: /yaml/i.test(ct) });
}

async function handleGet<R extends JsonReply>(
  svc: ApiService, ctx: RequestContext, t: Target, query: Query, table: boolean, reply: R,
): Promise<unknown> {
  const now = svc.deps.now;
  if (t.name) {
    const rv = parseResourceVersion(q(query, 'resourceVersion'));
    const current = svc.deps.store.currentRevision();
    if (rv !== undefined && rv > current) throw tooLargeResourceVersion(rv, current);
    const obj = await svc.get(ctx, t);
    if (table && !t.subresource) {
      const r = svc.resolve(t);
      const meta = { resourceVersion: obj.metadata.resourceVersion };
      return sendJson(reply, 200, toTable(r, [obj], meta, includeObject(query), now()));
    }
    return sendJson(reply, 200, obj);
  }
  const list = await svc.list(ctx, t, listOptionsOf(query));
  if (table) {
    const r = svc.resolve(t);
    return sendJson(reply, 200, toTable(r, list.items as KubeObject[], list.metadata,
      includeObject(query), now()));
  }
  return sendJson(reply, 200, list);
}

/**
 * The field selector of a watch; a watch of one object (a name in the path) selects it by
 * name, and any selector it is sent must name the same object (upstream get.go ListResource).
 */
function watchedFields(resource: string, t: Target, sent: string | undefined):
  string | undefined {
  if (!t.name) return sent;
  if (!sent?.trim()) return `metadata.name=${t.name}`;
  if (parseFieldSelector(sent, resource).exactValue('metadata.name') !== t.name) {
    throw kdpError('KDP_BAD_REQUEST', "fieldSelector metadata.name doesn't match requested name");
  }
  return sent;
}

async function handleWatch(
  svc: ApiService, ctx: RequestContext, t: Target, query: Query, table: boolean,
  reply: FastifyReply, lines: LineCache,
): Promise<unknown> {
  checkWatchOptions(query);
  const r = svc.resolve(t);
  const stream = buildWatchStream(r, { table, include: includeObject(query), now: svc.deps.now,
    lines });
  const handle = await svc.watch(ctx, t, { readOnly: true,
    labelSelector: q(query, 'labelSelector'),
    fieldSelector: watchedFields(r.resource, t, q(query, 'fieldSelector')),
    resourceVersion: q(query, 'resourceVersion'),
    allowWatchBookmarks: qBool(query, 'allowWatchBookmarks'),
    timeoutSeconds: qInt(query, 'timeoutSeconds') }, stream.sink);
  stream.attach(reply, handle);
  return reply;
}

/** sinceTime as metav1.Time decodes it (RFC3339); 400 otherwise. */
function sinceTimeOf(v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) || Number.isNaN(Date.parse(v))) {
    throw kdpError('KDP_BAD_REQUEST', `parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(v)} as "2006"`);
  }
  return v;
}

async function handleLog(
  svc: ApiService, ctx: RequestContext, t: Target, query: Query, reply: FastifyReply,
): Promise<unknown> {
  const gone = new AbortController();
  const out = await svc.logs(ctx, t, { container: q(query, 'container'),
    follow: qBool(query, 'follow'), tailLines: qInt(query, 'tailLines'),
    previous: qBool(query, 'previous'), sinceSeconds: qInt(query, 'sinceSeconds'),
    sinceTime: sinceTimeOf(q(query, 'sinceTime')), limitBytes: qInt(query, 'limitBytes'),
    timestamps: qBool(query, 'timestamps'), signal: gone.signal });
  if (typeof out === 'string') {
    return reply.code(200).header('content-type', 'text/plain').send(out);
  }
  reply.hijack();
  reply.raw.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
  reply.raw.flushHeaders();
  let closed = false;
  reply.raw.on('close', () => { closed = true; gone.abort(); });
  try {
    for await (const chunk of out) {
      if (closed) break;
      reply.raw.write(chunk);
    }
  } finally {
    if (!reply.raw.writableEnded) reply.raw.end();
  }
  return reply;
}
