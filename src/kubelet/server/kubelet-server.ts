// The kubelet's HTTPS API (port 10250), as upstream's server: client certificates from the
// cluster CA authenticate (anything else: 401), each request is authorised by asking the API
// server with a SubjectAccessReview for `nodes/<subresource>` of this node (403 with upstream's
// text), then exec / attach / portForward are served over the streaming protocols
// (src/streaming) from the runtime, and /containerLogs (container-logs.ts), /logs/?query=
// (the node log query, logging/node-log-query.ts), /pods, /healthz as upstream's paths. Served in netns mode on the node's InternalIP:10250 inside its namespace; by
// virtual nodes and `kdp node` processes on a loopback port (serve.ts).

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Pod } from '../../api/types.js';
import { isKdpError, type KdpError } from '../../errors.js';
import { refuseUpgrade, servePortForward, serveRemoteCommand } from '../../streaming/index.js';
import type { StreamingRuntime, StreamOptions } from '../streams.js';
import { parseContainerLogQuery, type ContainerLogSource } from './container-logs.js';
import type { NodeMonitor } from '../../metrics/node-monitor.js';
import { serveMonitorPath } from './monitor-routes.js';

export interface KubeletUser { readonly name: string; readonly groups: readonly string[] }

/** The serving certificate for the node's name and IPs, and the CA that signs clients. With
 *  `issued` (serverTLSBootstrap on a node without the CA key, bootstrap/kubelet-serving.ts)
 *  there is no pair yet: every handshake fails until the CSR's certificate arrives, as
 *  upstream's kubelet before its serving certificate is issued. */
export type KubeletServing =
  | { readonly certPem: string; readonly keyPem: string; readonly caPem: string }
  | { readonly caPem: string; readonly issued: Promise<{ readonly certPem: string; readonly keyPem: string }> };

export interface KubeletServerDeps {
  readonly nodeName: string;
  readonly tls: KubeletServing;
  /** SubjectAccessReview for `verb` on nodes/<subresource> of this node. */
  authorize(user: KubeletUser, verb: string, subresource: string): Promise<boolean>;
  pod(namespace: string, name: string): Pod | undefined;
  /** Container output for /containerLogs (default: none kept, every container's log empty). */
  readonly containerLogs?: ContainerLogSource;
  /** The node's pods, for /pods and /runningpods/ (default: none). */
  pods?(): readonly Pod[];
  readonly streaming?: StreamingRuntime;
  /** /metrics, /metrics/resource, /stats/summary (monitor-routes.ts); absent: /metrics is empty. */
  readonly monitor?: NodeMonitor;
  /** `/logs/?query=…` (upstream's NodeLogQuery, logging/node-log-query.ts): the answer to the
   *  request's parameters; absent: 404 as a kubelet without enableSystemLogQuery. */
  nodeLogs?(query: URLSearchParams): { readonly code: number; readonly body: string };
}

export const VIRTUAL_KUBELET_REFUSAL =
  'virtual nodes run no processes: exec, attach and port-forward need a netns cluster (sudo kdp up)';

function userOf(socket: TLSSocket): KubeletUser | undefined {
  if (!socket.authorized) return undefined;
  const c = socket.getPeerCertificate();
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const name = list(c?.subject?.CN)[0];
  return name ? { name, groups: [...list(c.subject.O), 'system:authenticated'] } : undefined;
}

/** upstream's kubelet auth: the path decides the subresource, the method the verb. */
function attributes(method: string, path: string): { verb: string; subresource: string } {
  const verb = method === 'POST' ? 'create' : method === 'PUT' ? 'update' : method === 'DELETE' ? 'delete'
    : method === 'PATCH' ? 'patch' : 'get';
  // isSubpath as upstream's: the path itself or below it, not a longer name (/statsx).
  const under = (p: string) => path === p || path.startsWith(`${p}/`);
  const sub = under('/stats') ? 'stats' : under('/metrics') ? 'metrics' : under('/logs') ? 'log' : 'proxy';
  return { verb, subresource: sub };
}

function statusBody(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export function buildKubeletServer(d: KubeletServerDeps): Server {
  const tls = d.tls;
  const server = createServer({ ...('issued' in tls ? {} : { cert: tls.certPem, key: tls.keyPem }), ca: tls.caPem,
    requestCert: true, rejectUnauthorized: false });
  // The issuer reports its own failure; the server then keeps refusing handshakes.
  if ('issued' in tls) {
    tls.issued.then((p) => server.setSecureContext({ cert: p.certPem, key: p.keyPem, ca: tls.caPem }), () => undefined);
  }

  /** Authenticates and authorises; answers 401/403 itself and returns false. */
  const admit = async (req: IncomingMessage, refuse: (code: number, text: string) => void): Promise<boolean> => {
    const user = userOf(req.socket as TLSSocket);
    if (!user) { refuse(401, 'Unauthorized'); return false; }
    const path = (req.url ?? '/').split('?')[0]!;
    const { verb, subresource } = attributes(req.method ?? 'GET', path);
    if (!(await d.authorize(user, verb, subresource).catch(() => false))) {
      refuse(403, `Forbidden (user=${user.name}, verb=${verb}, resource=nodes, subresource=${subresource})`);
      return false;
    }
    return true;
  };

  const target = (url: string) => {
    const [path, q = ''] = url.split('?');
    const parts = path!.split('/').filter(Boolean).map(decodeURIComponent);
    return { kind: parts[0], parts: parts.slice(1), query: new URLSearchParams(q) };
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (code: number, text: string) =>
      refuseUpgrade(socket, code, statusBody(code, code === 401 ? 'Unauthorized' : code === 403 ? 'Forbidden' : 'BadRequest', text));
    void (async () => {
      if (!(await admit(req, refuse))) return;
      const t = target(req.url ?? '/');
      // /exec/{ns}/{pod}[/{uid}]/{container}, /attach/…, /portForward/{ns}/{pod}[/{uid}]
      const [ns, name] = t.parts;
      const pod = ns && name ? d.pod(ns, name) : undefined;
      if (!pod) { refuse(404, `pod ${ns}/${name} not found`); return; }
      const uid = pod.metadata.uid!;
      if (!d.streaming) { refuse(400, VIRTUAL_KUBELET_REFUSAL); return; }
      const streaming = d.streaming;
      if (t.kind === 'exec' || t.kind === 'attach') {
        const container = t.parts[t.parts.length - 1]!;
        const flag = (k: string) => ['1', 'true'].includes(t.query.get(k) ?? '');
        const opts: StreamOptions = { stdin: flag('input'), stdout: flag('output'), stderr: flag('error'), tty: flag('tty') };
        const argv = t.query.getAll('command');
        await serveRemoteCommand(req, socket, head, opts, () => (t.kind === 'exec'
          ? streaming.exec(uid, container, argv, opts) : streaming.attach(uid, container, opts)));
      } else if (t.kind === 'portForward') {
        const ports = t.query.getAll('port').flatMap((p) => p.split(',')).filter(Boolean).map(Number);
        await servePortForward(req, socket, head, ports.length ? ports : undefined,
          (port) => streaming.portForward(uid, port), { pod: pod.metadata.name!, uid });
      } else {
        refuse(404, `no such path ${req.url}`);
      }
    })().catch((e) => { if (!socket.destroyed) refuse(500, (e as Error).message); });
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const send = (code: number, body: string, type = 'text/plain') => {
      res.writeHead(code, { 'Content-Type': type }).end(body);
    };
    void (async () => {
      // 401/403 as Go's http.Error writes them (text/plain, newline-terminated), as upstream's kubelet.
      if (!(await admit(req, (code, text) => send(code, `${text}\n`, 'text/plain; charset=utf-8')))) return;
      const t = target(req.url ?? '/');
      if (t.kind === 'healthz') return send(200, 'ok');
      if (t.kind === 'pods' && t.parts.length === 0) {
        return send(200, JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: d.pods?.() ?? [] }),
          'application/json');
      }
      if (t.kind === 'runningpods' && t.parts.length === 0) {
        // What the runtime runs: identity and containers only, as upstream's runningpods.
        const items = (d.pods?.() ?? []).map((p) => ({
          metadata: { name: p.metadata.name, namespace: p.metadata.namespace, uid: p.metadata.uid, creationTimestamp: null },
          spec: { containers: (p.spec?.containers ?? []).map((c) => ({ name: c.name, image: c.image, resources: {} })) },
          status: {},
        }));
        return send(200, JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items }), 'application/json');
      }
      const monitored = await serveMonitorPath(t.kind, t.parts, d.monitor);
      if (monitored) return send(monitored.code, monitored.body, monitored.type);
      if (t.kind === 'containerLogs') return await containerLogs(t, res, send);
      if (t.kind === 'logs' && t.parts.length === 0 && d.nodeLogs) {
        const a = d.nodeLogs(t.query);
        return send(a.code, a.body, a.code === 200 ? 'text/plain;charset=UTF-8' : 'text/plain; charset=utf-8');
      }
      if (t.kind === 'exec' || t.kind === 'attach' || t.kind === 'portForward') {
        return send(400, 'Upgrade request required');
      }
      return send(404, '404 page not found');
    })();
  });
  /** /containerLogs/{ns}/{pod}/{container}: errors as go-restful's WriteError (status + text). */
  async function containerLogs(t: { parts: string[]; query: URLSearchParams }, res: ServerResponse,
    send: (code: number, body: string, type?: string) => void): Promise<void> {
    const [ns, name, container] = t.parts;
    const fail = (e: unknown) => send(isKdpError(e) ? (e as KdpError).status : 500, (e as Error).message,
      'text/plain; charset=utf-8');
    if (!name) return send(400, '{"message": "Missing podID."}');
    if (!container) return send(400, '{"message": "Missing container name."}');
    if (!ns) return send(400, '{"message": "Missing podNamespace."}');
    let opts;
    try { opts = parseContainerLogQuery(t.query); } catch (e) { return fail(e); }
    const pod = d.pod(ns, name);
    if (!pod) return send(404, `pod "${name}" does not exist`, 'text/plain; charset=utf-8');
    const specs = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []),
      ...((pod.spec as { ephemeralContainers?: Array<{ name: string }> })?.ephemeralContainers ?? [])];
    if (!specs.some((c) => c.name === container)) {
      return send(404, `container "${container}" not found in pod "${name}"`, 'text/plain; charset=utf-8');
    }
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    let out: AsyncIterator<Buffer>;
    let first: IteratorResult<Buffer>;
    try {
      out = (d.containerLogs ?? (async function* () { /* none kept */ }))(pod, container, opts, aborted.signal)
        [Symbol.asyncIterator]();
      first = await out.next();
    } catch (e) { return fail(e); }
    // Headers go at once (upstream's zero-byte write through its flush writer): a follower sees
    // the answer start before the first line.
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    try {
      for (let r = first; !r.done; r = await out.next()) {
        if (res.destroyed) { await out.return?.(undefined); break; }
        res.write(r.value);
      }
      res.end();
    } catch {
      res.destroy();
    }
  }

  return server;
}
