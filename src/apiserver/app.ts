// Builds the API server (Fastify app + service) without listening; tests use `app.inject()`,
// `serve.ts` listens. Every error leaves as a Kubernetes Status.

import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, RequestListener } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { isKdpError, kdpError } from '../errors.js';
import { peerCertificateOf, peerCertificateRejection } from './authn/index.js';
import {
  distinctHeaders, hasImpersonationHeaders, impersonatedUser,
} from './authn/impersonation.js';
import { buildAuthorizer, forbiddenError } from './authz/index.js';
import {
  aggregatedContentType, aggregatedDiscovery, apiGroupList, apiVersions,
} from './discovery.js';
import { aggregatedVersion } from './http/media.js';
import { buildFastLane } from './http/fast-lane.js';
import { handleResourceRequest, sendJson } from './http/resource-handler.js';
import { loopbackKubeletDialer, VIRTUAL_NODES_RUN_NO_PROCESSES } from './proxy/backend-dialer.js';
import { kubeletLogProvider } from './proxy/kubelet-logs.js';
import { readObject } from './rest/read.js';
import type { Node } from '../api/types.js';
import { handleProxy, matchProxyPath } from './proxy/route.js';
import { podStreamUpgrade } from './proxy/pod-stream.js';
import type { Duplex } from 'node:stream';
import type { LineCache } from './http/watch-stream.js';
import { buildRefusalTracker, methodRefused } from './http-refusals.js';
import type { ClientError } from './http-refusals.js';
import { buildApiServerMetrics } from './metrics.js';
import { withMetricsApi } from '../metrics/catalog.js';
import { buildOpenApi } from './openapi.js';
import { answerV2, answerV3Doc, answerV3Index } from './openapi/serve.js';
import type { OpenApiAnswer, OpenApiRequest } from './openapi/serve.js';
import type { ApiServerOptions, ResolvedApiServerOptions } from './options.js';
import { resolveApiServerOptions } from './options.js';
import type { UserInfo } from './pipeline-types.js';
import { buildDefaultCatalog } from './resources.js';
import type { ResourceCatalog } from './resource-types.js';
import type { RequestContext } from './rest/deps.js';
import { pathNotFound } from './rest/errors.js';
import { parsePath } from './http/path.js';
import { buildObjectRules } from './rules.js';
import type { ApiService } from './service.js';
import { buildApiService } from './service.js';
import { statusFromError } from './status.js';
import { GIT_VERSION, versionInfo } from './version.js';
import { buildUiServer, type UiServer } from '../ui/server/ui-server.js';
import { registerLogIngest } from './log-ingest-route.js';

export interface ApiServer {
  readonly app: FastifyInstance;
  readonly service: ApiService;
  readonly options: ResolvedApiServerOptions;
  /** The web UI at `/ui/` (its sessions and one-time links). */
  readonly ui: UiServer;
  /** Closes the HTTP side (not the store, which the caller owns). */
  close(): Promise<void>;
}

export const ADMIN_USER: UserInfo = { name: 'system:admin', groups: ['system:masters',
  'system:authenticated'] };
const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

declare module 'fastify' {
  interface FastifyRequest { kdpUser: UserInfo | null }
}

function fastifyErrorToKdp(err: { code?: string; statusCode?: number; message: string }) {
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413) {
    return kdpError('KDP_TOO_LARGE', 'the request body is too large (limit 3 MiB)');
  }
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.statusCode === 415) {
    return kdpError('KDP_UNSUPPORTED_MEDIA_TYPE', err.message);
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return kdpError('KDP_BAD_REQUEST', err.message);
  }
  return err;
}

const SERVED_PATHS = new Set(['/api', '/apis', '/version', '/healthz', '/readyz', '/livez', '/metrics',
  '/openapi/v2', '/openapi/v3']);

/** A path some route serves (with another method than the request's, when not found). */
function isServedPath(catalog: ResourceCatalog, url: string): boolean {
  const path = url.split('?')[0]!.replace(/\/+$/, '');
  if (SERVED_PATHS.has(path) || path.startsWith('/openapi/v3/')) return true;
  const parsed = parsePath(catalog, path);
  if (parsed.kind === 'resource') {
    const t = parsed.target;
    return catalog.find(t.group, t.version, t.resource) !== undefined;
  }
  return parsed.kind !== 'invalid';
}

function sendError(reply: FastifyReply, e: unknown) {
  const st = statusFromError(e);
  if (reply.sent || reply.raw.headersSent) return reply;
  return sendJson(reply, st.code, st);
}

export function buildApiServer(opts: ApiServerOptions): ApiServer {
  const o = resolveApiServerOptions(opts);
  const catalog = withMetricsApi(o.catalog ?? buildDefaultCatalog(), o.metricsApi);
  const authorizer = o.authorizer ?? buildAuthorizer({ mode: 'AlwaysAllow' });
  // The one way to the nodes' kubelets and pods (backend-dialer.ts): by default virtual nodes'
  // kubelets on loopback; kdp up's netns mode passes a dialer into the node namespaces.
  const dialer = o.backendDialer ?? loopbackKubeletDialer(VIRTUAL_NODES_RUN_NO_PROCESSES);
  let nodeOf: (name: string) => Promise<Node> = () => Promise.reject(new Error('API server not built'));
  // pods/log: the pod's node's kubelet's /containerLogs (the same path for every node agent).
  const kubeletLogs = kubeletLogProvider({ dialer, tls: o.kubeletClient, node: (n) => nodeOf(n) });
  const service = buildApiService({
    store: o.store, catalog, rules: buildObjectRules(o.validator), authorizer,
    admission: o.admission ?? [], now: o.now, newUid: o.newUid,
    bookmarkIntervalMs: o.bookmarkIntervalMs, logProvider: o.logProvider ?? kubeletLogs,
    serviceAccountTokens: o.serviceAccountTokens, componentStatuses: o.componentStatuses,
    metricsApi: o.metricsApi,
  });
  const openapi = buildOpenApi(catalog, GIT_VERSION);
  const ui = buildUiServer(o.ui);
  const settle = (raw: IncomingMessage, user: UserInfo | null): UserInfo => {
    if (!user) refuseRejectedCertificate(raw);
    if (!user && !o.anonymous) throw kdpError('KDP_UNAUTHORIZED', 'Unauthorized');
    return user ?? ANONYMOUS;
  };
  // Synchronous unless the authenticator has to read (a service-account token).
  const authenticate = (raw: IncomingMessage): UserInfo | Promise<UserInfo> => {
    if (!o.authenticator) return ADMIN_USER;
    // The web UI's session cookie, when no Authorization header is sent (ui/server).
    const session = ui.sessionUser(raw);
    if (session) return session;
    const peer = peerCertificateOf(raw.socket as TLSSocket);
    const user = o.authenticator.authenticate({ headers: raw.headers, peerCertificate: peer });
    if (!(user instanceof Promise)) return settle(raw, user);
    return user.then((u) => settle(raw, u), (e: unknown) => {
      const why = (e as { cause?: unknown }).cause;
      app.log.info({ reason: why instanceof Error ? why.message : String(e) },
        'Unable to authenticate the request');
      throw e;
    });
  };
  // As upstream's union authenticator: a client certificate that fails verification is an error
  // unless another credential (a bearer token) authenticated the request, and anonymous access
  // never covers it. The server asks for certificates only when it has a client CA (serve.ts),
  // upstream's condition for its x509 authenticator.
  const refuseRejectedCertificate = (raw: IncomingMessage): void => {
    const why = o.authenticator ? peerCertificateRejection(raw.socket as TLSSocket) : undefined;
    if (why === undefined) return;
    app.log.info({ reason: why }, 'Unable to authenticate the request');
    throw kdpError('KDP_UNAUTHORIZED', 'Unauthorized');
  };
  // Authentication, then impersonation (upstream's filter order): the one place both the fast
  // lane and the Fastify hook learn who a request acts as.
  const requestUser = (raw: IncomingMessage): UserInfo | Promise<UserInfo> => {
    const user = authenticate(raw);
    // `raw.headers` is parsed already; the per-value view is built only when needed.
    if (!hasImpersonationHeaders(raw.headers)) return user;
    const impersonate = (u: UserInfo) =>
      impersonatedUser(u, distinctHeaders(raw), authorizer, raw.url ?? '');
    return user instanceof Promise ? user.then(impersonate) : impersonate(user);
  };
  // On a server of our own (listenApiServer), JSON resource requests skip Fastify.
  const metrics = buildApiServerMetrics(catalog);
  const lane = buildFastLane({ service, authenticate: requestUser, bodyLimit: o.bodyLimit });
  const factory = o.serverFactory;
  const refusals = buildRefusalTracker();
  const app = Fastify({ logger: o.logger ?? false, bodyLimit: o.bodyLimit,
    return503OnClosing: false, forceCloseConnections: true,
    ...(factory ? { serverFactory: (handler: RequestListener, opts: unknown) =>
      factory((req, res) => {
        const t0 = performance.now();
        res.once('finish', () => metrics.observe(req, res.statusCode, (performance.now() - t0) / 1000));
        if (refusals.admit(req, res) && !lane(req, res)) handler(req, res);
      }, opts as never) } : {}),
    // Requests Node's parser refuses (431, 400, 501, 405) and timeouts (408, 504) as Statuses.
    clientErrorHandler: (err, socket) =>
      refusals.onClientError(err as unknown as ClientError, socket),
    // Errors Fastify raises before routing (a malformed URL) are Statuses too.
    frameworkErrors: (err, _req, reply) => {
      void sendError(reply, fastifyErrorToKdp(err as { code?: string; statusCode?: number;
        message: string }));
    } });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: o.bodyLimit },
    (_req, body, done) => done(null, body));
  app.decorateRequest('kdpUser', null);

  app.addHook('onRequest', async (req) => {
    try {
      req.kdpUser = await requestUser(req.raw);
    } catch (e) {
      // The UI's pages answer a missing or refused credential with their login page.
      if (!ui.isUiPath(req.url) || !isKdpError(e, 'KDP_UNAUTHORIZED')) throw e;
      req.kdpUser = null;
    }
  });
  app.setErrorHandler((err, _req, reply) => sendError(reply, fastifyErrorToKdp(
    err as { code?: string; statusCode?: number; message: string })));
  // As go-restful: a path served for other methods answers 405, an unknown one 404.
  app.setNotFoundHandler((req, reply) => sendError(reply,
    isServedPath(catalog, req.url) ? methodRefused() : pathNotFound()));

  const ctxOf = (req: FastifyRequest): RequestContext => ({ user: req.kdpUser ?? ANONYMOUS });
  /** Non-resource requests are authorized by path (RBAC nonResourceURLs). */
  const nonResource = async (req: FastifyRequest) => {
    const path = req.url.split('?')[0]!;
    const attrs = { user: ctxOf(req).user, verb: req.method.toLowerCase(), resourceRequest: false,
      path };
    const d = await authorizer.authorize(attrs);
    if (!d.allowed) throw forbiddenError(attrs, d);
  };

  app.get('/metrics', async (req, reply) => {
    await nonResource(req);
    return reply.code(200).header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.get('/version', async (req, reply) => {
    await nonResource(req);
    return sendJson(reply, 200, versionInfo());
  });
  for (const p of ['/healthz', '/readyz', '/livez']) {
    app.get(p, async (req, reply) => {
      await nonResource(req);
      return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send('ok');
    });
  }
  const discovery = (core: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    await nonResource(req);
    const v = aggregatedVersion(req.headers.accept);
    if (v) {
      return reply.code(200).header('content-type', aggregatedContentType(v))
        .send(JSON.stringify(aggregatedDiscovery(catalog, core, v)));
    }
    const addr = `${req.raw.socket.localAddress ?? '127.0.0.1'}:${req.raw.socket.localPort ?? 0}`;
    return sendJson(reply, 200, core ? apiVersions(addr) : apiGroupList(catalog));
  };
  app.get('/api', discovery(true));
  app.get('/apis', discovery(false));
  const sendOpenApi = (reply: FastifyReply, a: OpenApiAnswer) =>
    reply.code(a.status).headers(a.headers).send(a.body);
  app.get('/openapi/v2', async (req, reply) => {
    await nonResource(req);
    return sendOpenApi(reply, answerV2(req.raw as OpenApiRequest, openapi.v2Json, openapi.v2Proto));
  });
  app.get('/openapi/v3', async (req, reply) => {
    await nonResource(req);
    return sendOpenApi(reply, answerV3Index(req.raw as OpenApiRequest, openapi.v3().index));
  });
  app.get('/openapi/v3/*', async (req, reply) => {
    await nonResource(req);
    const key = (req.params as { '*': string })['*'].split('?')[0]!;
    const doc = openapi.v3().docs.get(key);
    if (!doc) throw pathNotFound();
    return sendOpenApi(reply, answerV3Doc(req.raw as OpenApiRequest, key, doc));
  });
  // exec / attach / portforward arrive as HTTP upgrades, which Fastify does not route.
  nodeOf = async (n) => (await readObject(service.deps, service.resolve({ group: '', version: 'v1', resource: 'nodes' }),
    undefined, n)).obj as Node;
  const podStream = podStreamUpgrade({ service, authenticate: requestUser, dialer, kubeletClient: o.kubeletClient });
  (app.server as { on?: (ev: string, fn: (...a: never[]) => void) => void }).on?.('upgrade',
    (req: IncomingMessage, socket: Duplex, head: Buffer) => { if (!podStream(req, socket, head)) socket.destroy(); });
  const lines: LineCache = new WeakMap();
  const resource = async (req: FastifyRequest, reply: FastifyReply) => {
    const proxy = matchProxyPath(req.url);
    if (proxy) return handleProxy(service, ctxOf(req), req, reply, proxy, dialer, o.kubeletClient);
    return handleResourceRequest(service, ctxOf(req), req, reply, lines);
  };
  app.all('/api/*', resource);
  app.all('/apis/*', resource);
  registerLogIngest(app, { authorizer, userOf: (req) => ctxOf(req).user, sink: o.logIngest });
  ui.register(app, { service, authorizer, authenticateToken: async (token) => (o.authenticator
    ? o.authenticator.authenticate({ headers: { authorization: `Bearer ${token}` } }) : ADMIN_USER) });
  return { app, service, options: o, ui, close: () => app.close() };
}
