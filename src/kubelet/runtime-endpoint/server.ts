// The node's runtime endpoint: what `crictl` talks to on a node, as containerd's CRI socket. A
// small CRI-shaped API over HTTP on a unix socket (root-owned, mode 0600, listen.ts): each CRI
// call is `POST /runtime.v1.<Service>/<Method>` with the request message as JSON and the
// response message as JSON (protojson's shapes, cri-view.ts); errors are `{code, message}` with
// the kdp error code and its HTTP status. Exec returns a one-use URL on the same socket that the
// client upgrades (WebSocket channel protocol, src/streaming), as CRI's streaming server does;
// `GET /containerLogs/<id>` serves a container's log (kdp keeps logs in memory, not in a
// `logPath` file crictl could read). Nothing here goes through the API server.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { kdpError, KdpError } from '../../errors.js';
import { refuseUpgrade, serveRemoteCommand } from '../../streaming/index.js';
import type { RuntimeSandboxRecord } from '../runtime.js';
import type { StreamingRuntime, StreamOptions, StreamProcess } from '../streams.js';
import {
  containerEntries, containerStatus, listContainers, listImages, listPodSandbox, podSandboxStatus, resolveId,
  type ContainerEntry, type ContainerFilter, type SandboxFilter,
} from './cri-view.js';

export interface RuntimeEndpointDeps {
  readonly nodeName: string;
  /** The runtime's sandboxes, live and recently removed. */
  records(): RuntimeSandboxRecord[];
  /** A container's log text (previous: its previous run's). */
  logs(podUid: string, container: string, previous: boolean): string;
  /** The container run's CRI log file, when there is one (ContainerStatus.logPath). */
  logPath?(podUid: string, pod: { namespace: string; name: string }, container: string, attempt: number): string | undefined;
  /** Processes in containers; absent on a virtual node (exec answers `virtualMessage`). */
  readonly streaming?: StreamingRuntime;
  /** Poll period of `logs --follow` (ms). Default 250. */
  readonly followPollMs?: number;
}

export const VIRTUAL_EXEC_MESSAGE = 'virtual nodes run no processes: exec, attach and port-forward need a netns ' +
  'cluster (sudo kdp up)';

/** How long an Exec URL stays valid (upstream's streaming server: 1 minute). */
const EXEC_TOKEN_MS = 60_000;
const MAX_BODY = 1 << 20;
const MAX_SYNC_OUTPUT = 16 << 20;

interface ExecRequest { containerId?: string; cmd?: unknown; tty?: boolean; stdin?: boolean; stdout?: boolean;
  stderr?: boolean; timeout?: number | string }

export function buildRuntimeEndpointServer(d: RuntimeEndpointDeps): Server {
  const tokens = new Map<string, { entry: ContainerEntry; argv: string[]; opts: StreamOptions; timer: NodeJS.Timeout }>();

  const findSandbox = (prefix: string) => resolveId(d.records(), (r) => podSandboxStatus(r).status.id, prefix,
    'pod sandbox', d.nodeName);
  const findContainer = (prefix: string) => resolveId(containerEntries(d.records()), (e) => e.container.id, prefix,
    'container', d.nodeName);
  const requireId = (v: unknown, field: string): string => {
    if (typeof v !== 'string' || v === '') throw kdpError('KDP_BAD_REQUEST', `${field}: an ID is required`);
    return v;
  };

  /** The container must be the current run and running (upstream: "container is not running"). */
  const runningEntry = (id: unknown): ContainerEntry => {
    const e = findContainer(requireId(id, 'containerId'));
    if (!d.streaming) throw kdpError('KDP_BAD_REQUEST', VIRTUAL_EXEC_MESSAGE);
    if (e.container.state !== 'CONTAINER_RUNNING') {
      throw kdpError('KDP_BAD_REQUEST', `node ${d.nodeName}: container ${e.container.id.slice(0, 13)} ` +
        `(${e.name} in pod ${e.record.pod.metadata.namespace}/${e.record.pod.metadata.name}) is not running ` +
        `(state ${e.container.state})`);
    }
    return e;
  };
  const argvOf = (cmd: unknown): string[] => {
    if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((a) => typeof a === 'string')) {
      throw kdpError('KDP_BAD_REQUEST', 'cmd: a non-empty list of strings is required');
    }
    return cmd as string[];
  };
  const start = (e: ContainerEntry, argv: string[], opts: StreamOptions): Promise<StreamProcess> =>
    d.streaming!.exec(e.record.pod.metadata.uid!, e.name, argv, opts);

  const methods: Record<string, (body: Record<string, unknown>) => unknown> = {
    'runtime.v1.RuntimeService/Version': () => ({ version: '0.1.0', runtimeName: 'kdp', runtimeVersion: '0.1.0',
      runtimeApiVersion: 'v1' }),
    'runtime.v1.RuntimeService/ListPodSandbox': (b) => ({
      items: listPodSandbox(d.records(), (b.filter ?? {}) as SandboxFilter) }),
    'runtime.v1.RuntimeService/PodSandboxStatus': (b) => podSandboxStatus(findSandbox(requireId(b.podSandboxId, 'podSandboxId'))),
    'runtime.v1.RuntimeService/ListContainers': (b) => ({
      containers: listContainers(d.records(), (b.filter ?? {}) as ContainerFilter) }),
    'runtime.v1.RuntimeService/ContainerStatus': (b) => {
      const e = findContainer(requireId(b.containerId, 'containerId'));
      const m = e.record.pod.metadata;
      return containerStatus(e, d.logPath?.(m.uid!, { namespace: m.namespace ?? 'default', name: m.name! }, e.name,
        e.container.metadata.attempt) ?? '');
    },
    'runtime.v1.ImageService/ListImages': () => ({ images: listImages(d.records()) }),
    'runtime.v1.RuntimeService/ExecSync': (b) => execSync(b as ExecRequest),
    'runtime.v1.RuntimeService/Exec': (b) => {
      const r = b as ExecRequest;
      const e = runningEntry(r.containerId);
      const argv = argvOf(r.cmd);
      const opts: StreamOptions = { stdin: !!r.stdin, stdout: r.stdout ?? true, stderr: (r.stderr ?? true) && !r.tty,
        tty: !!r.tty };
      const token = randomBytes(12).toString('base64url');
      const timer = setTimeout(() => tokens.delete(token), EXEC_TOKEN_MS);
      timer.unref();
      tokens.set(token, { entry: e, argv, opts, timer });
      return { url: `/exec/${token}` };
    },
  };

  async function execSync(r: ExecRequest) {
    const e = runningEntry(r.containerId);
    const argv = argvOf(r.cmd);
    const timeoutS = Number(r.timeout ?? 0);
    if (!Number.isFinite(timeoutS) || timeoutS < 0) throw kdpError('KDP_BAD_REQUEST', 'timeout: seconds ≥ 0');
    const proc = await start(e, argv, { stdin: false, stdout: true, stderr: true, tty: false });
    const collect = (s: NodeJS.ReadableStream | undefined) => new Promise<Buffer>((resolve) => {
      const parts: Buffer[] = [];
      let n = 0;
      if (!s) { resolve(Buffer.alloc(0)); return; }
      s.on('data', (b: Buffer) => { if ((n += b.length) <= MAX_SYNC_OUTPUT) parts.push(b); });
      s.on('end', () => resolve(Buffer.concat(parts)));
      s.on('error', () => resolve(Buffer.concat(parts)));
    });
    let timedOut = false;
    const timer = timeoutS > 0 ? setTimeout(() => { timedOut = true; proc.close(); }, timeoutS * 1000) : undefined;
    const [stdout, stderr, code] = await Promise.all([collect(proc.stdout), collect(proc.stderr), proc.exited]);
    clearTimeout(timer);
    if (timedOut) throw kdpError('KDP_TIMEOUT', `command ${JSON.stringify(argv)} timed out after ${timeoutS}s`);
    return { stdout: stdout.toString('base64'), stderr: stderr.toString('base64'), exitCode: code ?? 0 };
  }

  async function serveLogs(id: string, q: URLSearchParams, res: ServerResponse): Promise<void> {
    const e = findContainer(id);
    const uid = e.record.pod.metadata.uid!;
    const tail = q.get('tailLines');
    const n = tail === null || tail === '' ? -1 : Number(tail);
    if (!Number.isInteger(n) || n < -1) throw kdpError('KDP_BAD_REQUEST', `tailLines: "${tail}" is not a line count`);
    const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
    let seen = lines(d.logs(uid, e.name, e.previous));
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    const first = n < 0 ? seen : n === 0 ? [] : seen.slice(-n);
    if (first.length) res.write(`${first.join('\n')}\n`);
    const follow = q.get('follow') === 'true' && !e.previous;
    if (!follow) { res.end(); return; }
    const period = d.followPollMs ?? 250;
    const timer = setInterval(() => {
      let now: string[];
      try { now = lines(d.logs(uid, e.name, false)); } catch { now = seen; }
      // The runtime keeps a bounded tail: find where the old lines continue in the new ones.
      let skip = 0;
      while (skip < seen.length && !seen.slice(skip).every((l, i) => now[i] === l)) skip++;
      const fresh = now.slice(seen.length - skip);
      if (fresh.length) res.write(`${fresh.join('\n')}\n`);
      seen = now;
      const cur = containerEntries(d.records()).find((x) => x.container.id === e.container.id);
      if (!cur || cur.container.state !== 'CONTAINER_RUNNING') { clearInterval(timer); res.end(); }
    }, period);
    res.on('close', () => clearInterval(timer));
  }

  const fail = (res: ServerResponse, err: unknown) => {
    const e = err instanceof KdpError ? err : kdpError('KDP_INTERNAL', (err as Error)?.message ?? String(err));
    if (res.headersSent) { res.destroy(); return; }
    res.writeHead(e.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: e.code, message: e.message }));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://runtime.invalid');
    const path = url.pathname.replace(/^\//, '');
    if (req.method === 'GET' && path.startsWith('containerLogs/')) {
      serveLogs(decodeURIComponent(path.slice('containerLogs/'.length)), url.searchParams, res).catch((e) => fail(res, e));
      return;
    }
    const method = methods[path];
    if (!method || req.method !== 'POST') {
      fail(res, kdpError('KDP_NOT_FOUND', `unknown runtime endpoint call ${req.method} /${path}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => { size += b.length; if (size <= MAX_BODY) chunks.push(b); });
    req.on('end', () => {
      void (async () => {
        if (size > MAX_BODY) throw kdpError('KDP_TOO_LARGE', 'request body over 1 MiB');
        let body: unknown = {};
        const text = Buffer.concat(chunks).toString('utf8');
        if (text.trim()) {
          try { body = JSON.parse(text); } catch { throw kdpError('KDP_BAD_REQUEST', 'request body is not JSON'); }
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          throw kdpError('KDP_BAD_REQUEST', 'request body must be a JSON object');
        }
        const out = await method(body as Record<string, unknown>);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(out));
      })().catch((e) => fail(res, e));
    });
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const token = /^\/exec\/([A-Za-z0-9_-]+)$/.exec(new URL(req.url ?? '/', 'http://x').pathname)?.[1];
    const t = token ? tokens.get(token) : undefined;
    if (!t) {
      refuseUpgrade(socket, 404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
        message: 'exec session not found or expired', reason: 'NotFound', code: 404 });
      return;
    }
    tokens.delete(token!);
    clearTimeout(t.timer);
    void serveRemoteCommand(req, socket, head, t.opts, () => start(t.entry, t.argv, t.opts)).catch(() => socket.destroy());
  });
  server.on('close', () => { for (const t of tokens.values()) clearTimeout(t.timer); tokens.clear(); });
  return server;
}

