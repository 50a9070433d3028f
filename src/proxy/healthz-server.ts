// kube-proxy's health endpoint (upstream pkg/proxy/healthcheck/proxy_health.go) on
// healthzBindAddress (default 0.0.0.0:10256): `GET /healthz` and `/livez` answer JSON
// `{"lastUpdated": …, "currentTime": …, "nodeEligible": true}` with 200 while the proxier is
// healthy and 503 when not. Healthy: the rules were applied within the health timeout (2 ×
// syncPeriod, as upstream's) — a proxier whose syncs stopped landing is unhealthy. Unlike
// upstream, which answers 200 before its first sync, kdp's is unhealthy until the first apply,
// so the pod's readiness means "this node's rules are in place".

import { createServer } from 'node:http';
import type { Server } from 'node:net';
import { parse as parseYAML } from 'yaml';

export interface ProxyHealth {
  /** An apply landed now. */
  updated(): void;
  /** Healthy now, and when the rules were last applied (undefined: never). */
  check(): { healthy: boolean; lastUpdated?: number };
}

export function buildProxyHealth(timeoutMs: number, now: () => number = Date.now): ProxyHealth {
  let last: number | undefined;
  return {
    updated() { last = now(); },
    check: () => ({ healthy: last !== undefined && now() - last <= timeoutMs, lastUpdated: last }),
  };
}

/** healthzBindAddress of a KubeProxyConfiguration text: host and port (default 0.0.0.0:10256;
 *  port 0: not served). */
export function healthzAddress(configText: string | undefined): { host: string; port: number } {
  const o = (configText ? parseYAML(configText) : undefined) as { healthzBindAddress?: unknown } | undefined;
  const v = typeof o?.healthzBindAddress === 'string' ? o.healthzBindAddress : '';
  if (!v) return { host: '0.0.0.0', port: 10256 };
  const m = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(v.includes('/') ? v.split('/')[0]! : v);
  const host = m?.[1] || '0.0.0.0';
  return { host: host === '' ? '0.0.0.0' : host, port: m?.[2] ? Number(m[2]) : 10256 };
}

/** Serves /healthz and /livez on `listener`'s connections; returns a closer. */
export function serveHealthz(listener: Server, health: ProxyHealth, now: () => number = Date.now): () => void {
  const http = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || (path !== '/healthz' && path !== '/livez')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    const h = health.check();
    const body = `{"lastUpdated": ${JSON.stringify(h.lastUpdated ? new Date(h.lastUpdated).toISOString() : '')},` +
      `"currentTime": ${JSON.stringify(new Date(now()).toISOString())}, "nodeEligible": true}`;
    res.writeHead(h.healthy ? 200 : 503, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' })
      .end(body);
  });
  listener.on('connection', (s) => http.emit('connection', s));
  return () => { listener.close(); http.close(); };
}
