// An API server with the production admission chain (NamespaceLifecycle, Service IPs, ...), as
// start.ts wires it, listening on 127.0.0.1 over plain HTTP: `req` goes through the real
// request path (JSON requests take the fast lane), `inject` through Fastify's routes. `rev` is
// the store revision, for asserting that a refused request wrote nothing.

import { request } from 'node:http';
import { buildAdmissionPlugins } from '../../../src/apiserver/admission/index.js';
import { buildObjectSource } from '../../../src/apiserver/admission-wiring.js';
import { buildDefaultCatalog } from '../../../src/apiserver/resources.js';
import type { ServiceDeps } from '../../../src/apiserver/rest/deps.js';
import { listenApiServer } from '../../../src/apiserver/serve.js';
import type { ListeningServer } from '../../../src/apiserver/serve.js';
import { buildMemoryStore } from '../../../src/store/index.js';
import type { StoreBackend } from '../../../src/store/types.js';

export interface Res { status: number; headers: Record<string, unknown>; text: string; body: any }
export type Send = (method: string, url: string, body?: unknown,
  headers?: Record<string, string>) => Promise<Res>;

export interface AdmittedServer {
  readonly srv: ListeningServer;
  readonly store: StoreBackend;
  /** Over HTTP (fast lane for JSON requests). */
  readonly req: Send;
  /** Through Fastify's routes (inject). */
  readonly inject: Send;
  rev(): number;
  done(): Promise<void>;
}

function payloadOf(body: unknown): string | Buffer | undefined {
  return body === undefined ? undefined :
    typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
}

function parsed(text: string): unknown {
  try { return JSON.parse(text); } catch { return undefined; }
}

export async function buildAdmittedServer(): Promise<AdmittedServer> {
  let deps: ServiceDeps | undefined;
  const store = buildMemoryStore();
  const srv = await listenApiServer({ store, admission: buildAdmissionPlugins({
    serviceCIDRs: ['10.96.0.0/12'], nodePortRange: '30000-32767',
    source: buildObjectSource(buildDefaultCatalog(), () => deps) }) },
  { port: 0, insecureHttp: true });
  deps = srv.service.deps;
  const headersFor = (payload: unknown, headers: Record<string, string>) => {
    const h: Record<string, string | number> = { ...headers };
    if (payload !== undefined &&
      !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) {
      h['content-type'] = 'application/json';
    }
    return h;
  };
  const req: Send = (method, url, body, headers = {}) => new Promise((resolve, reject) => {
    const payload = payloadOf(body);
    const h = headersFor(payload, headers);
    if (payload !== undefined) h['content-length'] = Buffer.byteLength(payload);
    const r = request(`${srv.url}${url}`, { method, headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, text, body: parsed(text) });
      });
    });
    r.on('error', reject);
    r.end(payload);
  });
  const inject: Send = async (method, url, body, headers = {}) => {
    const payload = payloadOf(body);
    const res = await srv.app.inject({ method: method as 'GET', url, payload,
      headers: headersFor(payload, headers) as Record<string, string> });
    return { status: res.statusCode, headers: res.headers, text: res.body,
      body: parsed(res.body) };
  };
  await req('POST', '/api/v1/namespaces', { metadata: { name: 'default' } });
  return { srv, store, req, inject, rev: () => store.currentRevision(),
    async done() { await srv.close(); await store.close(); } };
}
