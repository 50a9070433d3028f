// pods/exec, pods/attach and pods/portforward: the one place the API server calls a node. The
// upgrade request is authenticated and authorised here (the HTTP method's verb on the
// subresource), the container defaulted as upstream's, and the request re-sent to the pod's
// node's kubelet (`/exec/{ns}/{pod}/{container}?command=…&input=1…`, `/portForward/{ns}/{pod}`)
// over TLS with the API server's kubelet client certificate; from then on bytes are spliced
// both ways (the kubelet speaks the streaming protocols). Errors before that are Statuses.

import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Node, Pod } from '../../api/types.js';
import { isKdpError, kdpError } from '../../errors.js';
import type { UserInfo } from '../pipeline-types.js';
import { readObject } from '../rest/read.js';
import type { ApiService } from '../service.js';
import { statusFromError } from '../status.js';
import type { BackendDialer } from './backend-dialer.js';
import { dialError } from './http-proxy.js';
import { connectKubelet, type KubeletClientTls } from './kubelet-tls.js';
import { nodeLocation } from './node-location.js';
import { pipeGathered } from '../../streaming/gathered-pipe.js';

/** TLS 1.3 suites for the kubelet hop in Go's order on AES hardware (AES-128-GCM first, as
 *  kube-apiserver's client offers them; Node's default puts AES-256 first, a costlier seal on
 *  every streamed byte). */
const KUBELET_CIPHERS = 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256';

const PATH = /^\/api\/v1\/namespaces\/([^/?]+)\/pods\/([^/?]+)\/(exec|attach|portforward)(?:\?(.*))?$/;

export interface PodStreamDeps {
  readonly service: ApiService;
  authenticate(req: IncomingMessage): UserInfo | Promise<UserInfo>;
  readonly dialer: BackendDialer;
  /** The API server's client identity at kubelets (kube-apiserver-kubelet-client). */
  readonly kubeletClient?: KubeletClientTls;
}

function refuse(socket: Duplex, e: unknown): void {
  const st = statusFromError(e);
  const body = JSON.stringify(st);
  socket.end(`HTTP/1.1 ${st.code} ${st.reason ?? 'Error'}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** upstream validateContainer: the named one, else the only one, else 400 naming the choices. */
function containerOf(pod: Pod, wanted: string | null): string {
  const names = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []),
    ...((pod.spec as { ephemeralContainers?: Array<{ name: string }> })?.ephemeralContainers ?? [])].map((c) => c.name);
  const podName = pod.metadata.name;
  if (wanted) {
    if (!names.includes(wanted)) throw kdpError('KDP_BAD_REQUEST', `container ${wanted} is not valid for pod ${podName}`);
    return wanted;
  }
  const main = (pod.spec?.containers ?? []).map((c) => c.name);
  if (main.length === 1) return main[0]!;
  if (main.length === 0) throw kdpError('KDP_BAD_REQUEST', `a container name must be specified for pod ${podName}`);
  throw kdpError('KDP_BAD_REQUEST', `a container name must be specified for pod ${podName}, choose one of: [${main.join(' ')}]`);
}

/** The handler for the server's 'upgrade' event; false when the path is not one of these. */
export function podStreamUpgrade(d: PodStreamDeps) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const m = PATH.exec(req.url ?? '');
    if (!m) return false;
    const [, nsRaw, nameRaw, sub, q = ''] = m;
    const ns = decodeURIComponent(nsRaw!);
    const name = decodeURIComponent(nameRaw!);
    void (async () => {
      const user = await d.authenticate(req);
      const verb = req.method === 'POST' ? 'create' : 'get';
      await d.service.authorize({ user }, { group: '', version: 'v1', resource: 'pods', namespace: ns, name, subresource: sub }, verb);
      const pods = d.service.resolve({ group: '', version: 'v1', resource: 'pods', namespace: ns });
      const pod = (await readObject(d.service.deps, pods, ns, name)).obj as Pod;
      const nodeName = pod.spec?.nodeName;
      if (!nodeName) throw kdpError('KDP_BAD_REQUEST', `pod ${name} does not have a host assigned`);
      const query = new URLSearchParams(q);
      let path: string;
      if (sub === 'portforward') {
        const ports = query.getAll('ports');
        path = `/portForward/${encodeURIComponent(ns)}/${encodeURIComponent(name)}${ports.length ? `?port=${ports.join(',')}` : ''}`;
      } else {
        const container = containerOf(pod, query.get('container'));
        const out = new URLSearchParams();
        for (const c of query.getAll('command')) out.append('command', c);
        const on = (k: string) => ['true', '1'].includes(query.get(k) ?? '');
        if (on('stdin')) out.set('input', '1');
        if (on('stdout')) out.set('output', '1');
        if (on('stderr')) out.set('error', '1');
        if (on('tty')) out.set('tty', '1');
        path = `/${sub}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}?${out}`;
      }
      const nodes = d.service.resolve({ group: '', version: 'v1', resource: 'nodes' });
      const node = (await readObject(d.service.deps, nodes, undefined, nodeName)).obj as Node;
      const { ip, port = 10250 } = nodeLocation(node, 'https', '');
      let raw: Duplex;
      try {
        raw = await d.dialer.dial({ node: nodeName, ip, port, kubelet: true });
      } catch (e) {
        throw kdpError('KDP_UNAVAILABLE', `error dialing backend: ${dialError({ ip, port }, e)}`);
      }
      (raw as Socket).setNoDelay?.(true);
      (socket as Socket).setNoDelay?.(true);
      // The kubelet's certificate: from the cluster CA and valid for the Node's address (kubelet-tls.ts).
      const up = connectKubelet(raw as Socket, ip, d.kubeletClient, { ciphers: KUBELET_CIPHERS });
      try {
        await new Promise<void>((resolve, reject) => { up.once('secureConnect', resolve); up.once('error', reject); });
      } catch (e) {
        throw kdpError('KDP_UNAVAILABLE', `error dialing backend: ${(e as Error).message}`);
      }
      const skip = new Set(['host', 'authorization', 'content-length']);
      const lines = [`${req.method} ${path} HTTP/1.1`, `Host: ${ip.includes(':') ? `[${ip}]` : ip}:${port}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        if (!skip.has(req.rawHeaders[i]!.toLowerCase())) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      }
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) up.write(head);
      // Each turn's bytes in one write (streaming/gathered-pipe.ts), not one per TLS record.
      pipeGathered(up, socket);
      pipeGathered(socket, up);
      const close = () => { up.destroy(); socket.destroy(); };
      up.once('close', close);
      socket.once('close', close);
      up.on('error', close);
      socket.on('error', close);
    })().catch((e) => {
      if (!socket.destroyed) refuse(socket, isKdpError(e) ? e : kdpError('KDP_UNAVAILABLE', (e as Error).message));
    });
    return true;
  };
}
