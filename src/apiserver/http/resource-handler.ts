// Maps HTTP requests on `/api/*` and `/apis/*` to service calls and renders their answers
// (JSON objects, Tables, watch streams, log text).

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DeleteOptions, KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import type { ApiService, Target } from '../service.js';
import type { RequestContext } from '../rest/deps.js';
import type { IncludeObject } from '../table/index.js';
import { toTable } from '../table/index.js';
import { apiGroupDoc, apiResourceList } from '../discovery.js';
import { pathNotFound } from '../rest/errors.js';
import { encodingOf } from '../rest/codec.js';
import { decodeBody, unsupportedMediaType } from './body.js';
import { PATCH_TYPES, mediaType, wantsTable } from './media.js';
import { parsePath } from './path.js';
import type { ParsedPath } from './path.js';
import type { Query } from './query.js';
import { q, qBool, qDryRun, qInt } from './query.js';
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

function listOptions(query: Query) {
  return { labelSelector: q(query, 'labelSelector'), fieldSelector: q(query, 'fieldSelector'),
    limit: qInt(query, 'limit'), continue: q(query, 'continue'),
    resourceVersion: q(query, 'resourceVersion') };
}

function deleteOptions(body: unknown, query: Query): DeleteOptions {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const grace = qInt(query, 'gracePeriodSeconds') ?? (typeof b.gracePeriodSeconds === 'number' ?
    b.gracePeriodSeconds : undefined);
  const policy = (q(query, 'propagationPolicy') ?? b.propagationPolicy) as
    DeleteOptions['propagationPolicy'] | undefined;
  if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
    throw kdpError('KDP_INVALID', `propagationPolicy: Unsupported value: "${String(policy)}"`);
  }
  const orphan = b.orphanDependents;
  const dry = qDryRun(query) || (Array.isArray(b.dryRun) && b.dryRun.includes('All'));
  return { gracePeriodSeconds: grace,
    propagationPolicy: policy ?? (orphan === true ? 'Orphan' : undefined),
    preconditions: b.preconditions as DeleteOptions['preconditions'], dryRun: dry };
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
  return target.subresource === 'log' || (!target.name && qBool(req.query as Query, 'watch'));
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
  if (parsed.kind === 'group' || parsed.kind === 'groupVersion') {
    if (req.method !== 'GET') throw pathNotFound();
    const doc = parsed.kind === 'group' ? apiGroupDoc(svc.catalog, parsed.group) :
      apiResourceList(svc.catalog, parsed.group, parsed.version);
    if (!doc) throw pathNotFound();
    return sendJson(reply, 200, doc);
  }
  const t = parsed.target;
  const query = req.query as Query;
  const table = wantsTable(req.headers.accept);
  switch (req.method) {
    case 'GET': return handleGet(svc, ctx, t, query, table, reply);
    case 'POST': {
      const body = decodeBody(req.headers['content-type'], req.body);
      const out = await svc.create(ctx, t, body, { dryRun: qDryRun(query),
        fieldManager: fieldManager(req, query) });
      return sendJson(reply, 201, out);
    }
    case 'PUT': {
      const body = decodeBody(req.headers['content-type'], req.body);
      const out = await svc.update(ctx, t, body, { dryRun: qDryRun(query),
        fieldManager: fieldManager(req, query) });
      return sendJson(reply, out.created ? 201 : 200, out.obj);
    }
    case 'PATCH': {
      const mt = mediaType(req.headers['content-type']);
      const type = PATCH_TYPES[mt];
      if (!type) throw unsupportedMediaType(mt);
      const body = decodeBody(req.headers['content-type'], req.body);
      if (body === undefined) throw kdpError('KDP_BAD_REQUEST', 'the patch body is empty');
      const force = q(query, 'force');
      if (force !== undefined && type !== 'apply') {
        throw kdpError('KDP_BAD_REQUEST', 'force may not be specified for non-apply patch');
      }
      const out = await svc.patch(ctx, t, type, body, { dryRun: qDryRun(query),
        fieldManager: type === 'apply' ? q(query, 'fieldManager') : fieldManager(req, query),
        force: force === 'true' });
      return sendJson(reply, out.created ? 201 : 200, out.obj);
    }
    case 'DELETE': {
      const body = decodeBody(req.headers['content-type'], req.body);
      const opts = deleteOptions(body, query);
      if (!t.name) {
        return sendJson(reply, 200, await svc.deleteCollection(ctx, t, listOptions(query), opts));
      }
      return sendJson(reply, 200, await svc.delete(ctx, t, opts));
    }
    default:
      throw kdpError('KDP_METHOD_NOT_ALLOWED', `${req.method} is not supported`);
  }
}

async function handleGet<R extends JsonReply>(
  svc: ApiService, ctx: RequestContext, t: Target, query: Query, table: boolean, reply: R,
): Promise<unknown> {
  const now = svc.deps.now;
  if (t.name) {
    const obj = await svc.get(ctx, t);
    if (table && !t.subresource) {
      const r = svc.resolve(t);
      const meta = { resourceVersion: obj.metadata.resourceVersion };
      return sendJson(reply, 200, toTable(r, [obj], meta, includeObject(query), now()));
    }
    return sendJson(reply, 200, obj);
  }
  const list = await svc.list(ctx, t, listOptions(query));
  if (table) {
    const r = svc.resolve(t);
    return sendJson(reply, 200, toTable(r, list.items as KubeObject[], list.metadata,
      includeObject(query), now()));
  }
  return sendJson(reply, 200, list);
}

async function handleWatch(
  svc: ApiService, ctx: RequestContext, t: Target, query: Query, table: boolean,
  reply: FastifyReply, lines: LineCache,
): Promise<unknown> {
  const r = svc.resolve(t);
  const stream = buildWatchStream(r, { table, include: includeObject(query), now: svc.deps.now,
    lines });
  const handle = await svc.watch(ctx, t, { readOnly: true,
    labelSelector: q(query, 'labelSelector'),
    fieldSelector: q(query, 'fieldSelector'), resourceVersion: q(query, 'resourceVersion'),
    allowWatchBookmarks: qBool(query, 'allowWatchBookmarks'),
    timeoutSeconds: qInt(query, 'timeoutSeconds') }, stream.sink);
  stream.attach(reply, handle);
  return reply;
}

async function handleLog(
  svc: ApiService, ctx: RequestContext, t: Target, query: Query, reply: FastifyReply,
): Promise<unknown> {
  const out = await svc.logs(ctx, t, { container: q(query, 'container'),
    follow: qBool(query, 'follow'), tailLines: qInt(query, 'tailLines'),
    previous: qBool(query, 'previous'), sinceSeconds: qInt(query, 'sinceSeconds'),
    timestamps: qBool(query, 'timestamps') });
  if (typeof out === 'string') {
    return reply.code(200).header('content-type', 'text/plain').send(out);
  }
  reply.hijack();
  reply.raw.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
  let closed = false;
  reply.raw.on('close', () => { closed = true; });
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
