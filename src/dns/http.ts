// CoreDNS's HTTP side, each on its own listener as in kubeadm's Corefile: `health` (`/health`
// on :8080, 200 `OK` while the process serves), `ready` (`/ready` on :8181, 200 `OK` once the
// kubernetes records have synced, else 503 naming the plugin not ready) and `prometheus`
// (`/metrics` on :9153). Anything else is 404.

import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface HttpEndpoint {
  /** '' for every address. */
  readonly host: string;
  readonly port: number;
}

export interface DnsHttpOptions {
  readonly health?: HttpEndpoint;
  readonly ready?: HttpEndpoint;
  readonly metrics?: HttpEndpoint;
  readonly isReady: () => boolean;
  readonly registry?: Registry;
}

export interface DnsHttp {
  /** Bound ports (0 asked: the port given), by endpoint name. */
  readonly ports: Readonly<Partial<Record<'health' | 'ready' | 'metrics', number>>>;
  close(): Promise<void>;
}

type Route = (path: string) => Promise<{ status: number; type: string; body: string }> | undefined;

function listen(ep: HttpEndpoint, route: Route): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const r = req.method === 'GET' || req.method === 'HEAD' ? route(path) : undefined;
    if (!r) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    r.then((out) => {
      res.writeHead(out.status, { 'content-type': out.type }).end(req.method === 'HEAD' ? '' : out.body);
    }, () => res.writeHead(500).end());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (ep.host) server.listen(ep.port, ep.host, () => resolve(server));
    else server.listen(ep.port, () => resolve(server));
  });
}

const text = (status: number, body: string) =>
  Promise.resolve({ status, type: 'text/plain; charset=utf-8', body });

export async function startDnsHttp(o: DnsHttpOptions): Promise<DnsHttp> {
  const servers: Server[] = [];
  const ports: Partial<Record<'health' | 'ready' | 'metrics', number>> = {};
  const add = async (name: 'health' | 'ready' | 'metrics', ep: HttpEndpoint | undefined,
    route: Route) => {
    if (!ep) return;
    const s = await listen(ep, route);
    servers.push(s);
    const addr = s.address();
    ports[name] = typeof addr === 'object' && addr ? addr.port : ep.port;
  };
  try {
    await add('health', o.health, (p) => (p === '/health' ? text(200, 'OK') : undefined));
    await add('ready', o.ready, (p) => (p !== '/ready' ? undefined
      : o.isReady() ? text(200, 'OK') : text(503, 'kubernetes')));
    const registry = o.registry;
    await add('metrics', o.metrics, (p) => (p !== '/metrics' || !registry ? undefined
      : registry.metrics().then((body) => ({ status: 200, type: registry.contentType, body }))));
  } catch (e) {
    for (const s of servers) s.close();
    throw e;
  }
  return {
    ports,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      })));
    },
  };
}
