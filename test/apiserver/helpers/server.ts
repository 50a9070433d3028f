// An API server over a memory store, listening on loopback: `req` sends real HTTP requests, so
// they take the path production requests take (JSON requests through the fast lane, the rest
// through Fastify's routes), not inject()'s shortcut past the HTTP server. JSON helpers too.

import { request } from 'node:http';
import type { ApiServerOptions } from '../../../src/apiserver/options.js';
import { listenApiServer, type ListeningServer } from '../../../src/apiserver/serve.js';
import { buildMemoryStore } from '../../../src/store/index.js';
import type { StoreBackend } from '../../../src/store/types.js';

export interface TestServer extends ListeningServer {
  readonly store: StoreBackend;
  /** Sends a request; objects are sent as JSON unless a string or Buffer is given. */
  req(method: string, url: string, body?: unknown, headers?: Record<string, string>):
    Promise<{ status: number; body: any; headers: Record<string, unknown>; text: string }>;
  done(): Promise<void>;
}

export async function buildTestServer(opts: Partial<ApiServerOptions> = {}): Promise<TestServer> {
  const store = opts.store ?? buildMemoryStore();
  const srv = await listenApiServer({ ...opts, store }, { port: 0, insecureHttp: true });
  const req: TestServer['req'] = (method, url, body, headers = {}) => new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined :
      typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    // Every real client names itself (the field manager of its writes comes from it).
    const h: Record<string, string | number> = { 'user-agent': 'kdp-test/1.0', ...headers };
    if (payload !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) {
      h['content-type'] = 'application/json';
    }
    if (payload !== undefined) h['content-length'] = Buffer.byteLength(payload);
    const r = request(`${srv.url}${url}`, { method, headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try { parsed = JSON.parse(text); } catch { parsed = undefined; }
        resolve({ status: res.statusCode!, body: parsed, headers: res.headers, text });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(payload);
  });
  await req('POST', '/api/v1/namespaces', { metadata: { name: 'default' } });
  return { ...srv, store, req, async done() { await srv.close(); await store.close(); } };
}

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,' +
  'application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

export function deployment(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, labels: { app: name } },
    spec: { replicas: 1, selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web',
        image: 'nginx:1.27', ports: [{ containerPort: 80 }],
        env: [{ name: 'A', value: '1' }] }] } },
      ...extra },
  };
}

export function pod(name: string, labels: Record<string, string> = {}, nodeName?: string) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'busybox:1.36' }],
      ...(nodeName ? { nodeName } : {}) } };
}
