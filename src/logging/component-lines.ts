// The components' own log lines, as their processes would print them. Every component logs
// the Events it records, as client-go's event broadcaster does (StartStructuredLogging:
// `"Event occurred" object="ns/name" fieldPath=… kind=… apiVersion=… type=… reason=…
// message=…`); which component made an Event is its `source.component` (kubelet and kube-proxy
// with `source.host`, the node). The API server logs each HTTP request it served, as its
// httplog does (`"HTTP" verb=… URI=… latency=… userAgent=… audit-ID=… srcIP=… resp=…`).

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Event } from '../api/types.js';
import type { ComponentName } from './record.js';

export interface ComponentLine {
  readonly component: ComponentName;
  readonly node?: string;
  readonly message: string;
}

const q = (v: unknown) => JSON.stringify(v ?? '');

/** The component that recorded an Event (controllers are the controller manager's). */
export function eventComponent(ev: Event): { component: ComponentName; node?: string } {
  const by = ev.source?.component || ev.reportingComponent || '';
  const host = ev.source?.host || ev.reportingInstance || undefined;
  if (by === 'kubelet') return { component: 'kubelet', node: host };
  if (by === 'kube-proxy') return { component: 'kube-proxy', node: host };
  if (by === 'default-scheduler') return { component: 'scheduler' };
  return { component: 'controller-manager' };
}

/** The line a component's event broadcaster logs for an Event. */
export function eventLine(ev: Event): ComponentLine {
  const o = ev.involvedObject ?? {};
  const object = o.namespace ? `${o.namespace}/${o.name ?? ''}` : (o.name ?? '');
  return { ...eventComponent(ev), message: `"Event occurred" object=${q(object)} fieldPath=${q(o.fieldPath)} ` +
    `kind=${q(o.kind)} apiVersion=${q(o.apiVersion)} type=${q(ev.type)} reason=${q(ev.reason)} message=${q(ev.message)}` };
}

/** The API server's line for one finished HTTP request. */
export function httpLine(req: IncomingMessage, res: ServerResponse, latencyMs: number): string {
  const src = req.socket?.remoteAddress ? `${req.socket.remoteAddress}:${req.socket.remotePort}` : '';
  return `"HTTP" verb=${q(req.method)} URI=${q(req.url)} latency=${q(`${latencyMs.toFixed(3)}ms`)} ` +
    `userAgent=${q(req.headers['user-agent'])} audit-ID=${q(res.getHeader('audit-id'))} srcIP=${q(src)} ` +
    `resp=${res.statusCode}`;
}

/**
 * A line of kdp up's agents' warnings (`kube-proxy n1: …`) as the component's own, or
 * undefined for lines of other parts.
 */
export function agentLine(line: string): ComponentLine | undefined {
  const m = /^kube-proxy (\S+): (.*)$/s.exec(line);
  return m ? { component: 'kube-proxy', node: m[1], message: m[2]! } : undefined;
}

/** Calls `write` with the API server's line for each request `server` finishes, after its
 *  "Serving securely" line; returns the unsubscriber. */
export function logApiRequests(server: Server, write: (message: string) => void): () => void {
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const t0 = performance.now();
    res.once('close', () => write(httpLine(req, res, performance.now() - t0)));
  };
  server.on('request', onRequest);
  const addr = server.address();
  if (addr && typeof addr === 'object') {
    const host = addr.address.includes(':') ? `[${addr.address}]` : addr.address;
    write(`"Serving securely on ${host}:${addr.port}"`);
  }
  return () => { server.off('request', onRequest); };
}
