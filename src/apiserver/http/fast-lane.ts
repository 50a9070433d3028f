// A lane in front of Fastify for requests answered with one JSON document on `/api/` and
// `/apis/` (creates, gets, lists, updates, patches, deletes): it skips Fastify's routing, hook
// runner, content-type parser and reply pipeline, which cost about as much CPU as the service
// call of a small create, and runs the same authentication, service calls and Status errors.
// Everything else (watches, logs, HEAD, discovery roots, non-resource paths) goes to Fastify.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { kdpError } from '../../errors.js';
import type { UserInfo } from '../pipeline-types.js';
import type { ApiService } from '../service.js';
import { statusFromError } from '../status.js';
import { parsePath } from './path.js';
import { handleJsonRequest, isStreamRequest, sendJson } from './resource-handler.js';
import type { JsonReply, ResourceRequest } from './resource-handler.js';

export interface FastLaneOptions {
  readonly service: ApiService;
  /** As the Fastify onRequest hook: the user (after impersonation), or throws
   *  (KDP_UNAUTHORIZED, KDP_FORBIDDEN for refused impersonation). */
  readonly authenticate: (req: IncomingMessage) => UserInfo | Promise<UserInfo>;
  readonly bodyLimit: number;
}

/** Handles the request and returns true, or returns false (untouched) for Fastify. */
export type FastLane = (req: IncomingMessage, res: ServerResponse) => boolean;

const LANE_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

class RawReply implements JsonReply {
  private status = 200;
  private type = 'application/json';
  constructor(private readonly res: ServerResponse) {}
  code(status: number): this { this.status = status; return this; }
  header(name: string, value: string): this {
    if (name.toLowerCase() === 'content-type') this.type = value;
    else this.res.setHeader(name, value);
    return this;
  }
  send(body: string): void {
    if (this.res.headersSent) return;
    this.res.writeHead(this.status, { 'content-type': this.type,
      'content-length': Buffer.byteLength(body) });
    this.res.end(body);
  }
}

function tooLarge() {
  return kdpError('KDP_TOO_LARGE', 'the request body is too large (limit 3 MiB)');
}

/** The body as one Buffer (undefined when empty); 413 past `limit`. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) { req.removeAllListeners('data'); req.resume(); reject(tooLarge()); }
      else chunks.push(c);
    });
    req.on('end', () => resolve(size === 0 ? undefined :
      chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}

function wellEscaped(url: string): boolean {
  if (!url.includes('%')) return true;
  try {
    decodeURIComponent(url.split('?')[0]!);
    return true;
  } catch {
    return false;
  }
}

export function buildFastLane(o: FastLaneOptions): FastLane {
  const { service } = o;
  return (raw, res) => {
    const url = raw.url ?? '';
    if (!LANE_METHODS.has(raw.method ?? '') ||
      !(url.startsWith('/api/') || url.startsWith('/apis/'))) return false;
    // A malformed percent-escape is Fastify's 400 (as Go's server refuses such a request line);
    // the lenient path parser here would read it as a name and answer 404.
    if (!wellEscaped(url)) return false;
    const parsed = parsePath(service.catalog, url);
    if (parsed.kind === 'invalid') return false;
    // Proxied (not one JSON document): the Fastify route streams them.
    if (parsed.kind === 'resource' && parsed.target.subresource === 'proxy') return false;
    const q = url.indexOf('?');
    const query = q < 0 ? {} : parseQuery(url.slice(q + 1));
    const probe = { url, method: raw.method!, headers: raw.headers, query, body: undefined };
    if (parsed.kind === 'resource' && isStreamRequest(probe, parsed.target)) return false;
    void serve(raw, res, probe, parsed);
    return true;
  };

  async function serve(raw: IncomingMessage, res: ServerResponse, probe: ResourceRequest,
    parsed: ReturnType<typeof parsePath>): Promise<void> {
    const reply = new RawReply(res);
    try {
      const user = await o.authenticate(raw);
      const body = await readBody(raw, o.bodyLimit);
      await handleJsonRequest(service, { user }, { ...probe, body }, reply, parsed);
    } catch (e) {
      const st = statusFromError(e);
      sendJson(reply, st.code, st);
    }
  }
}
