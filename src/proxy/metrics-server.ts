// kube-proxy's metrics endpoint: `GET /metrics` in Prometheus text format on whatever listening
// server it is given (in netns mode one bound on metricsBindAddress inside the node's namespace,
// as a real kube-proxy's is on the node). Everything else is 404.

import { createServer } from 'node:http';
import type { Server } from 'node:net';
import type { Registry } from 'prom-client';

/** Serves `registry` on `listener`'s connections; returns a closer. */
export function serveMetrics(listener: Server, registry: Registry): () => void {
  const http = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    registry.metrics().then((text) => {
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(text);
    }, (e: unknown) => res.writeHead(500).end(String(e)));
  });
  listener.on('connection', (s) => http.emit('connection', s));
  return () => { listener.close(); http.close(); };
}
