// `/api/v1/namespaces/{ns}/pods/{id}/proxy[/path]` and `…/services/{id}/proxy[/path]`:
// authorised as the HTTP method's verb on the `proxy` subresource (before anything is read, as
// upstream), resolved to an address (locations.ts) and proxied (http-proxy.ts). Errors before
// the answer starts leave as Statuses.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EndpointSlice, Node, Pod, Service } from '../../api/types.js';
import { kdpError } from '../../errors.js';
import type { RequestContext } from '../rest/deps.js';
import { listObjects, readObject } from '../rest/read.js';
import type { ApiService, Target } from '../service.js';
import { statusFromError } from '../status.js';
import type { BackendDialer } from './backend-dialer.js';
import { proxyHttp, type ClientTls } from './http-proxy.js';
import { nodeLocation } from './node-location.js';
import { podLocation, serviceLocation, splitSchemeNamePort, type ProxyLocation } from './locations.js';

const PATH = /^\/api\/v1\/namespaces\/([^/?]+)\/(pods|services)\/([^/?]+)\/proxy(\/[^?]*)?(?:\?(.*))?$/;
const NODE_PATH = /^\/api\/v1\/nodes\/([^/?]+)\/proxy(\/[^?]*)?(?:\?(.*))?$/;

export interface ProxyPath {
  readonly namespace: string;
  readonly resource: 'pods' | 'services' | 'nodes';
  readonly id: string;
  readonly path: string;
  readonly query: string;
}

export function matchProxyPath(url: string): ProxyPath | undefined {
  const dec = (s: string) => { try { return decodeURIComponent(s); } catch { return s; } };
  const n = NODE_PATH.exec(url);
  if (n) return { namespace: '', resource: 'nodes', id: dec(n[1]!), path: n[2] ?? '', query: n[3] ?? '' };
  const m = PATH.exec(url);
  if (!m) return undefined;
  return { namespace: dec(m[1]!), resource: m[2] as 'pods' | 'services', id: dec(m[3]!), path: m[4] ?? '',
    query: m[5] ?? '' };
}

const VERBS: Record<string, string> = {
  GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete', OPTIONS: 'get',
};

async function locate(svc: ApiService, p: ProxyPath, name: string, scheme: string, port: string): Promise<ProxyLocation & { kubelet?: boolean }> {
  if (p.resource === 'nodes') {
    const { obj } = await readObject(svc.deps, svc.resolve({ group: '', version: 'v1', resource: 'nodes' }), undefined, name);
    return nodeLocation(obj as Node, scheme, port);
  }
  const t = (resource: string): Target => ({ group: resource === 'endpointslices' ? 'discovery.k8s.io' : '',
    version: 'v1', resource, namespace: p.namespace });
  if (p.resource === 'pods') {
    const { obj } = await readObject(svc.deps, svc.resolve(t('pods')), p.namespace, name);
    return podLocation(obj as Pod, scheme, port);
  }
  const { obj } = await readObject(svc.deps, svc.resolve(t('services')), p.namespace, name);
  const slices = await listObjects(svc.deps, svc.resolve(t('endpointslices')), p.namespace,
    { labelSelector: `kubernetes.io/service-name=${name}` });
  return serviceLocation(obj as Service, slices.items as EndpointSlice[], p.id, scheme, port);
}

export async function handleProxy(
  svc: ApiService, ctx: RequestContext, req: FastifyRequest, reply: FastifyReply, p: ProxyPath,
  dialer: BackendDialer, kubeletClient?: ClientTls,
): Promise<unknown> {
  const verb = VERBS[req.method];
  if (!verb) throw kdpError('KDP_METHOD_NOT_ALLOWED', 'the server does not allow this method on the requested resource');
  const parts = splitSchemeNamePort(p.id);
  if (!parts) throw kdpError('KDP_BAD_REQUEST', `invalid ${p.resource.slice(0, -1)} request ${JSON.stringify(p.id)}`);
  await svc.authorize(ctx, { group: '', version: 'v1', resource: p.resource, namespace: p.namespace || undefined,
    name: parts.name, subresource: 'proxy' }, verb);
  const loc = await locate(svc, p, parts.name, parts.scheme, parts.port);
  reply.hijack();
  const body = Buffer.isBuffer(req.body) ? req.body : undefined;
  try {
    // The kubelet's port gets the API server's kubelet client certificate (nodes/proxy).
    await proxyHttp({ req: req.raw, res: reply.raw, body, path: p.path, query: p.query, loc, dialer,
      ...(loc.kubelet && kubeletClient ? { tls: kubeletClient } : {}) });
  } catch (e) {
    const status = statusFromError(e);
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(status.code, { 'Content-Type': 'application/json' });
      reply.raw.end(JSON.stringify(status));
    } else reply.raw.destroy();
  }
  return reply;
}
