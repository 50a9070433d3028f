// An API server over a memory store, for inject() tests; JSON helpers for requests.

import { buildApiServer } from '../../../src/apiserver/app.js';
import type { ApiServer } from '../../../src/apiserver/app.js';
import type { ApiServerOptions } from '../../../src/apiserver/options.js';
import { buildMemoryStore } from '../../../src/store/index.js';
import type { StoreBackend } from '../../../src/store/types.js';

export interface TestServer extends ApiServer {
  readonly store: StoreBackend;
  /** Sends a request; objects are sent as JSON unless a string or Buffer is given. */
  req(method: string, url: string, body?: unknown, headers?: Record<string, string>):
    Promise<{ status: number; body: any; headers: Record<string, unknown>; text: string }>;
  done(): Promise<void>;
}

export async function buildTestServer(opts: Partial<ApiServerOptions> = {}): Promise<TestServer> {
  const store = opts.store ?? buildMemoryStore();
  const srv = buildApiServer({ ...opts, store });
  const req: TestServer['req'] = async (method, url, body, headers = {}) => {
    const payload = body === undefined ? undefined :
      typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const h = { ...headers };
    if (payload !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) {
      h['content-type'] = 'application/json';
    }
    const res = await srv.app.inject({ method: method as 'GET', url, payload, headers: h });
    let parsed: unknown;
    try { parsed = JSON.parse(res.body); } catch { parsed = undefined; }
    return { status: res.statusCode, body: parsed, headers: res.headers, text: res.body };
  };
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
