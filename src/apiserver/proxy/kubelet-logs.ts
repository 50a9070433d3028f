// pods/log's fetch from the pod's node's kubelet, as upstream's LogLocation + LocationStreamer:
// `GET https://<InternalIP>:<daemonEndpoints port>/containerLogs/{ns}/{pod}/{container}?…` over
// TLS with the API server's kubelet client certificate, through the backend dialer (inside the
// node's namespace in netns mode, loopback for virtual nodes). A 2xx answer is streamed as it
// comes; anything else becomes upstream's GenericHttpResponseChecker error (the kubelet's 400
// text passed through as a BadRequest, 500 as an InternalError, others a generic response
// naming `pods/log`); a failed dial is upstream's client error (`Get "https://…": dial tcp …`).

import { request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Node } from '../../api/types.js';
import type { KubeObject } from '../../client/types.js';
import { kdpError, type ErrorCode } from '../../errors.js';
import type { LogOptions, LogProvider } from '../rest/deps.js';
import type { BackendDialer } from './backend-dialer.js';
import { dialError } from './http-proxy.js';
import { connectKubelet, type KubeletClientTls } from './kubelet-tls.js';
import { nodeLocation } from './node-location.js';

export interface KubeletLogsDeps {
  readonly dialer: BackendDialer;
  /** The API server's client identity at kubelets (kube-apiserver-kubelet-client). */
  readonly tls?: KubeletClientTls;
  /** The Node (NotFound propagates, as upstream's GetConnectionInfo). */
  node(name: string): Promise<Node>;
}

/** upstream's LogLocation query: only the options given, sinceTime as RFC3339 seconds. */
export function kubeletLogQuery(o: LogOptions): string {
  const p = new URLSearchParams();
  if (o.follow) p.set('follow', 'true');
  if (o.previous) p.set('previous', 'true');
  if (o.timestamps) p.set('timestamps', 'true');
  if (o.sinceSeconds !== undefined) p.set('sinceSeconds', String(o.sinceSeconds));
  if (o.sinceTime !== undefined) p.set('sinceTime', new Date(o.sinceTime).toISOString().replace(/\.\d+Z$/, 'Z'));
  if (o.tailLines !== undefined) p.set('tailLines', String(o.tailLines));
  if (o.limitBytes !== undefined) p.set('limitBytes', String(o.limitBytes));
  // url.Values.Encode sorts by key.
  return [...p.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
}

/** upstream's GenericHttpResponseChecker for pods/log. */
export function kubeletLogError(code: number, body: string, podName: string): Error {
  if (code === 400) return kdpError('KDP_BAD_REQUEST', body);
  if (code === 500) return kdpError('KDP_INTERNAL', `Internal error occurred: ${body}`);
  const generic: Record<number, [ErrorCode, string]> = {
    401: ['KDP_UNAUTHORIZED', 'the server has asked for the client to provide credentials'],
    403: ['KDP_FORBIDDEN', body],
    404: ['KDP_NOT_FOUND', 'the server could not find the requested resource'],
    422: ['KDP_INVALID', 'the server rejected our request due to an error in our request'],
    503: ['KDP_UNAVAILABLE', 'the server is currently unable to handle the request'],
  };
  const [c, m] = generic[code] ?? ['KDP_INTERNAL', code >= 500
    ? `an error on the server (${JSON.stringify(body)}) has prevented the request from succeeding`
    : `the server responded with the status code ${code} but did not return more information`];
  return kdpError(c, `${m} ( pods/log ${podName})`, { name: podName, kind: 'pods/log' });
}

export function kubeletLogProvider(d: KubeletLogsDeps): LogProvider {
  return {
    async logs(pod: KubeObject, container: string, opts: LogOptions) {
      const nodeName = (pod.spec as { nodeName?: string }).nodeName!;
      const at = nodeLocation(await d.node(nodeName), 'https', '');
      const loc = { ip: at.ip, port: at.port ?? 10250 };
      const ns = pod.metadata.namespace ?? 'default';
      const name = pod.metadata.name!;
      const query = kubeletLogQuery(opts);
      const path = `/containerLogs/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/` +
        `${encodeURIComponent(container)}${query ? `?${query}` : ''}`;
      const host = loc.ip.includes(':') ? `[${loc.ip}]:${loc.port}` : `${loc.ip}:${loc.port}`;
      const url = `https://${host}${path}`;
      let raw;
      try {
        raw = await d.dialer.dial({ node: nodeName, ip: loc.ip, port: loc.port, kubelet: true });
      } catch (e) {
        throw kdpError('KDP_INTERNAL', `Get ${JSON.stringify(url)}: ${dialError(loc, e)}`);
      }
      // The kubelet's certificate: from the cluster CA and valid for the Node's address (kubelet-tls.ts).
      const socket = connectKubelet(raw as Socket, loc.ip, d.tls);
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = request({ method: 'GET', path, headers: { host }, createConnection: () => socket }, resolve);
        req.on('error', (e) => reject(kdpError('KDP_INTERNAL', `Get ${JSON.stringify(url)}: ${e.message}`)));
        opts.signal?.addEventListener('abort', () => req.destroy(), { once: true });
        req.end();
      });
      if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 206) {
        let body = '';
        for await (const chunk of res) { if (body.length < 50_000) body += String(chunk); }
        throw kubeletLogError(res.statusCode ?? 500, body.slice(0, 50_000), name);
      }
      const signal = opts.signal;
      return (async function* () {
        const stop = () => res.destroy();
        signal?.addEventListener('abort', stop, { once: true });
        try {
          for await (const chunk of res) yield chunk as Buffer;
        } catch { /* the kubelet or the client went away: the log ends */ } finally {
          signal?.removeEventListener('abort', stop);
          res.destroy();
        }
      })();
    },
  };
}
