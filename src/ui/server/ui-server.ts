// The web UI at `/ui/` of the API server: the same listener, certificate and authentication as
// the API. A request is let in with the API's credentials (bearer token, client certificate) or
// with the UI's session cookie, which a one-time link (`kdp up`, `kdp ui`) or a pasted bearer
// token opens. A session acts with the identity that opened it, and only reads: any other verb
// than GET/HEAD under a session cookie is refused, so a page can neither change the cluster nor
// be made to (the cookie is also SameSite=Strict, HttpOnly and Secure).

import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dataDirPaths } from '../../cluster/data-dir.js';
import { isKdpError, kdpError } from '../../errors.js';
import type { Authorizer, UserInfo } from '../../apiserver/pipeline-types.js';
import type { ApiService } from '../../apiserver/service.js';
import { statusFromError } from '../../apiserver/status.js';
import { ALL_UNAUTHENTICATED } from '../../apiserver/authn/index.js';
import { buildInProcessClient } from '../../client/in-process.js';
import { parseProtocol } from '../../trace/packet.js';
import type { TraceMode } from '../../trace/offline.js';
import { traceClusterJson } from '../../trace/cluster-json.js';
import { liveClusterTraceJson } from '../../trace/live/live-json.js';
import { assertLiveCapable } from '../../trace/live/live-trace-cluster.js';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { LOGIN_CSS, SHELL_HTML, loginHtml, uiAssets } from './assets.js';
import { buildUiSessions, type UiSessions } from './sessions.js';
import { parseKinds, streamKinds } from './watch-mux.js';
import { parseLogSearch, streamLogSearch } from './log-search.js';
import {
  buildSyncFeed, clusterProxyMode, ruleDiff, ruleHistory, ruleNodes, ruleSnapshot, syncSummary,
} from './rules-data.js';

export const SESSION_COOKIE = 'kdp-ui-session';
const SESSION_MAX_AGE_S = 12 * 3600;
/** Subresources a session may not use even with GET. */
const STREAMING_SUBRESOURCE = new RegExp('^/api/v1/(?:namespaces/[^/]+/(?:pods|services)|nodes)' +
  '/[^/]+/(?:exec|attach|portforward|proxy)(?:/|$)');

export interface UiServerOptions {
  /** The cluster's data directory (kube-proxy rule history, cluster.json); absent: the trace
   *  and rules views answer 503. */
  readonly dataDir?: string;
  readonly sessions?: UiSessions;
}

export interface UiDeps {
  readonly service: ApiService;
  readonly authorizer: Authorizer;
  /** The user of a bearer token; null when unknown (throwing is also a refusal). */
  authenticateToken(token: string): Promise<UserInfo | null>;
}

export interface UiServer {
  readonly sessions: UiSessions;
  /** The user of a request that carries a live session cookie and no Authorization header;
   *  undefined otherwise. Throws KDP_FORBIDDEN for a session request that would write. */
  sessionUser(raw: IncomingMessage): UserInfo | undefined;
  /** Paths under `/ui`, which answer a missing or refused credential with their login page. */
  isUiPath(url: string): boolean;
  register(app: FastifyInstance, deps: UiDeps): void;
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const isAuthenticated = (u: UserInfo | null): u is UserInfo =>
  !!u && !u.groups.includes(ALL_UNAUTHENTICATED);

export function buildUiServer(o: UiServerOptions = {}): UiServer {
  const sessions = o.sessions ?? buildUiSessions();
  return {
    sessions,
    sessionUser(raw) {
      if (raw.headers.authorization !== undefined) return undefined;
      const id = cookieValue(raw.headers.cookie, SESSION_COOKIE);
      const user = id ? sessions.userOf(id) : undefined;
      if (!user) return undefined;
      // Only reads: no other verb, no upgrade (exec, attach, port-forward are GET upgrades), and
      // no proxying to pods, services or nodes (a GET there can do anything the target does).
      const path = (raw.url ?? '').split('?')[0]!;
      if ((raw.method !== 'GET' && raw.method !== 'HEAD') || raw.headers.upgrade !== undefined ||
        STREAMING_SUBRESOURCE.test(path)) {
        throw kdpError('KDP_FORBIDDEN', 'the web UI session is read-only: it may only read (GET); ' +
          'use kubectl or kdp with your kubeconfig to change the cluster');
      }
      return user;
    },
    isUiPath: (url) => url === '/ui' || url.startsWith('/ui/') || url.startsWith('/ui?'),
    register: (app, deps) => registerRoutes(app, deps, sessions, o.dataDir),
  };
}

function sendStatus(reply: FastifyReply, e: unknown): FastifyReply {
  // Input the tracer, the rule reader or the log query refuses is the request's fault (a live
  // trace of a virtual cluster too); a live trace this process cannot run is unavailable.
  const err = isKdpError(e) && ['KDP_TRACE', 'KDP_CONFIG', 'KDP_PARSE', 'KDP_DIFF', 'KDP_LIVE_VIRTUAL']
    .includes(e.code) ? kdpError('KDP_BAD_REQUEST', e.message)
    : isKdpError(e) && (e.code === 'KDP_NEEDS_ROOT' || e.code === 'KDP_NOT_RUNNING')
      ? kdpError('KDP_UNAVAILABLE', e.message) : e;
  const st = statusFromError(err);
  return reply.code(st.code).header('content-type', 'application/json').send(JSON.stringify(st));
}

function cookie(id: string, maxAge: number): string {
  return `${SESSION_COOKIE}=${id}; Path=/; Max-Age=${maxAge}; HttpOnly; Secure; SameSite=Strict`;
}

function registerRoutes(app: FastifyInstance, deps: UiDeps, sessions: UiSessions,
  dataDir: string | undefined): void {
  const userOf = (req: FastifyRequest) => (isAuthenticated(req.kdpUser) ? req.kdpUser : undefined);
  const needUser = (req: FastifyRequest): UserInfo => {
    const u = userOf(req);
    if (!u) throw kdpError('KDP_UNAUTHORIZED', 'Unauthorized');
    return u;
  };
  const needDataDir = (): string => {
    if (!dataDir) throw kdpError('KDP_UNAVAILABLE', 'this API server keeps no cluster data directory');
    return dataDir;
  };
  const allow = async (user: UserInfo, verb: string, resource: string, subresource?: string,
    name?: string, namespace?: string) => {
    const attrs = { user, verb, resourceRequest: true, apiGroup: '', resource, subresource, name,
      namespace: namespace || undefined };
    const d = await deps.authorizer.authorize(attrs);
    if (!d.allowed) {
      throw kdpError('KDP_FORBIDDEN', `User "${user.name}" cannot ${verb} resource "${resource}` +
        `${subresource ? `/${subresource}` : ''}"${name ? ` "${name}"` : ''}` +
        `${namespace ? ` in the namespace "${namespace}"` : namespace === '' ? ' at the cluster scope' : ''}`);
    }
  };
  const loginPage = (reply: FastifyReply, message?: string) => reply.code(401)
    .header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store')
    .send(loginHtml(message));
  const json = (reply: FastifyReply, body: unknown, code = 200) => reply.code(code)
    .header('content-type', 'application/json').header('cache-control', 'no-store')
    .send(JSON.stringify(body));
  const api = (path: string, fn: (req: FastifyRequest, user: UserInfo) => Promise<unknown>) =>
    app.get(path, async (req, reply) => {
      try {
        return json(reply, await fn(req, needUser(req)));
      } catch (e) {
        return sendStatus(reply, e);
      }
    });
  const startSession = (reply: FastifyReply, id: string) => reply.code(303)
    .header('set-cookie', cookie(id, SESSION_MAX_AGE_S)).header('location', '/ui/')
    .header('cache-control', 'no-store').send();

  app.addHook('onSend', async (req, reply, payload) => {
    if (!req.url.startsWith('/ui')) return payload;
    reply.header('content-security-policy', "default-src 'self'; img-src 'self' data:; " +
      "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'");
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    return payload;
  });
  app.get('/ui', async (_req, reply) => reply.code(301).header('location', '/ui/').send());
  app.get('/ui/', async (req, reply) => (userOf(req)
    ? reply.code(200).header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store').send(SHELL_HTML)
    : loginPage(reply)));
  app.get('/ui/assets/login.css', async (_req, reply) =>
    reply.code(200).header('content-type', 'text/css; charset=utf-8').send(LOGIN_CSS));
  for (const [file, type] of [['app.js', 'text/javascript'], ['app.css', 'text/css']] as const) {
    app.get(`/ui/assets/${file}`, async (req, reply) => {
      try {
        needUser(req);
        const a = await uiAssets();
        return reply.code(200).header('content-type', `${type}; charset=utf-8`)
          .header('cache-control', 'no-cache').send(file === 'app.js' ? a.js : a.css);
      } catch (e) {
        return sendStatus(reply, e);
      }
    });
  }
  app.get('/ui/login', async (req, reply) => {
    const token = (req.query as Record<string, unknown>).token;
    const id = typeof token === 'string' ? sessions.redeemLink(token) : undefined;
    if (!id) return loginPage(reply, 'This login link is unknown, expired or already used.');
    return startSession(reply, id);
  });
  app.post('/ui/login', async (req, reply) => {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `https://${req.headers.host}`) {
      return sendStatus(reply, kdpError('KDP_FORBIDDEN', `login from another origin (${origin})`));
    }
    const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    const token = new URLSearchParams(body).get('token')?.trim() ?? '';
    let user: UserInfo | null = null;
    try {
      user = token ? await deps.authenticateToken(token) : null;
    } catch {
      user = null;
    }
    if (!isAuthenticated(user)) return loginPage(reply, 'That token is not valid for this cluster.');
    return startSession(reply, sessions.openSession(user));
  });
  app.get('/ui/logout', async (req, reply) => {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (id) sessions.closeSession(id);
    return reply.code(303).header('set-cookie', cookie('', 0)).header('location', '/ui/').send();
  });
  // `kdp up` and `kdp ui` ask for a link with the kubeconfig's credentials; it acts as them.
  app.post('/ui/links', async (req, reply) => {
    try {
      const { token, expiresAt } = sessions.issueLink(needUser(req));
      // The link is about to be opened: build the bundle now rather than on that request.
      void uiAssets().catch(() => undefined);
      return json(reply, { path: `/ui/login?token=${token}`, expiresAt: expiresAt.toISOString() },
        201);
    } catch (e) {
      return sendStatus(reply, e);
    }
  });
  api('/ui/api/whoami', async (_req, user) => ({ name: user.name, groups: user.groups }));
  api('/ui/api/cluster', async () => clusterView(dataDir));
  api('/ui/api/trace', async (req, user) => {
    const q = req.query as Record<string, string | undefined>;
    const dir = needDataDir();
    const mode = clusterProxyMode(dir) as TraceMode | undefined;
    if (!mode) throw kdpError('KDP_UNAVAILABLE', 'no kdp cluster runs from this data directory');
    for (const f of ['src', 'dst'] as const) {
      if (!q[f]) throw kdpError('KDP_BAD_REQUEST', `${f}: required (a pod, node, service or IP)`);
    }
    const sport = q.sport ? Number(q.sport) : undefined;
    if (sport !== undefined && !(Number.isInteger(sport) && sport > 0 && sport < 65536)) {
      throw kdpError('KDP_BAD_REQUEST', `sport: "${q.sport}" is not a port number`);
    }
    const client = buildInProcessClient(deps.service, user);
    const proto = parseProtocol(q.proto || 'tcp');
    if (q.live === 'true' || q.live === '1') {
      // The probe is sent from inside the cluster's namespaces and the nodes' kernels traced
      // meanwhile: as much as the kubelet API gives (nodes/proxy), and nothing is changed.
      await allow(user, 'get', 'nodes', 'proxy');
      const paths = dataDirPaths(dir);
      return (await liveClusterTraceJson({ paths, info: readClusterInfo(paths), client, src: q.src!,
        dst: q.dst!, proto, sport, what: 'the web UI\'s live trace' })).json;
    }
    return (await traceClusterJson(client, dir, mode, q.src!, q.dst!, proto, sport)).json;
  });
  // The cluster log store, searched with `kdp logs`' filters (log-search.ts): container lines
  // as `pods/log` of their namespace (every namespace: cluster-wide), component lines as the
  // kubelet's /logs (nodes/proxy).
  app.get('/ui/api/logs', async (req, reply) => {
    let search: ReturnType<typeof parseLogSearch>;
    let dir: string;
    try {
      const user = needUser(req);
      dir = needDataDir();
      search = parseLogSearch(req.query as Record<string, string | undefined>);
      const f = search.filters;
      if (f.component !== undefined) await allow(user, 'get', 'nodes', 'proxy', f.node);
      else await allow(user, 'get', 'pods', 'log', undefined, f.allNamespaces ? '' : f.namespace ?? 'default');
    } catch (e) {
      return sendStatus(reply, e);
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store',
      'x-content-type-options': 'nosniff' });
    const stop = streamLogSearch(dir, search, res);
    req.raw.once('close', stop);
    res.once('close', stop);
  });
  const nodeParam = (req: FastifyRequest) => (req.params as { node: string }).node;
  api('/ui/api/rules/:node', async (req, user) => {
    await allow(user, 'get', 'nodes', 'proxy', nodeParam(req));
    return ruleHistory(needDataDir(), nodeParam(req));
  });
  api('/ui/api/rules/:node/snapshot', async (req, user) => {
    await allow(user, 'get', 'nodes', 'proxy', nodeParam(req));
    const q = req.query as Record<string, string | undefined>;
    return ruleSnapshot(needDataDir(), nodeParam(req), q.seq, q.family);
  });
  api('/ui/api/rules/:node/diff', async (req, user) => {
    await allow(user, 'get', 'nodes', 'proxy', nodeParam(req));
    const q = req.query as Record<string, string | undefined>;
    return ruleDiff(needDataDir(), nodeParam(req), q.a, q.b, q.family);
  });
  // Every kind the UI keeps live, and each node's last sync, on one stream (watch-mux.ts).
  app.get('/ui/api/watch', async (req, reply) => {
    let user: UserInfo;
    let kinds: string[];
    try {
      user = needUser(req);
      kinds = parseKinds((req.query as Record<string, string | undefined>).kinds);
    } catch (e) {
      return sendStatus(reply, e);
    }
    const syncAllowed = dataDir !== undefined && (await deps.authorizer.authorize({ user,
      verb: 'list', resourceRequest: true, apiGroup: '', resource: 'nodes' })).allowed;
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store',
      'x-content-type-options': 'nosniff' });
    const stop = streamKinds(buildInProcessClient(deps.service, user), kinds, res);
    let unsubscribe = () => {};
    if (syncAllowed) {
      const mode = clusterProxyMode(dataDir);
      const line = (summary: unknown) => `${JSON.stringify({ kind: 'sync', type: 'SYNC', summary })}\n`;
      for (const node of ruleNodes(dataDir)) res.write(line(syncSummary(dataDir, node, mode)));
      unsubscribe = feedOf(dataDir).subscribe((summary) => {
        if (!res.writableEnded) res.write(line(summary));
      });
    }
    const end = () => {
      unsubscribe();
      stop();
    };
    req.raw.once('close', end);
    res.once('close', end);
  });
}

const feeds = new Map<string, ReturnType<typeof buildSyncFeed>>();
function feedOf(dir: string) {
  let f = feeds.get(dir);
  if (!f) feeds.set(dir, f = buildSyncFeed(dir));
  return f;
}

/** Whether the trace view's live toggle can work here, and if not why (its tooltip). */
function liveState(dataDir: string): { available: boolean; reason?: string } {
  try {
    const paths = dataDirPaths(dataDir);
    assertLiveCapable('live tracing', readClusterInfo(paths), paths);
    return { available: true };
  } catch (e) {
    return { available: false, reason: (e as Error).message };
  }
}

/** What the topology's underlay line shows, from cluster.json (nothing when absent). */
function clusterView(dataDir: string | undefined): Record<string, unknown> {
  if (!dataDir) return {};
  try {
    const info = JSON.parse(readFileSync(dataDirPaths(dataDir).clusterFile, 'utf8')) as
      Record<string, unknown>;
    const { mode, proxyMode, clusterCIDRs, serviceCIDRs, ipFamily, timeScale } = info;
    return { mode, proxyMode, clusterCIDRs, serviceCIDRs, ipFamily, timeScale, live: liveState(dataDir) };
  } catch {
    return {};
  }
}
