// A minimal stand-in API server for driving the streaming module with real clients: answers
// discovery and GET of one Running pod `p` (container `c`), and hands the exec/attach/portforward
// upgrades to src/streaming with a test-supplied process starter and dialer.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { issueCa, issueLeaf } from '../../../src/apiserver/pki/issue.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { StreamOptions, StreamProcess } from '../../../src/kubelet/streams.js';
import { refuseUpgrade, serveRemoteCommand, servePortForward } from '../../../src/streaming/index.js';

export const KUBECTL_DIR = '/usr/lib/google-cloud-sdk/bin';

export function kubectlPath(minor: number): string {
  return join(KUBECTL_DIR, `kubectl.1.${minor}`);
}

/** Skip when the binary is missing, except under CI=true where that is a failure. */
export function kubectlMissing(minor: number): boolean {
  const missing = !existsSync(kubectlPath(minor));
  if (missing && process.env.CI === 'true') throw new Error(`kubectl 1.${minor} is required under CI`);
  return missing;
}

export type Starter = (kind: 'exec' | 'attach', argv: string[], opts: StreamOptions) => Promise<StreamProcess>;

export interface StreamServerOptions {
  start: Starter;
  dial?: (port: number) => Promise<Duplex>;
  /** Answer every WebSocket upgrade 400 (a server without WebSocket support). */
  refuseWebSocket?: boolean;
  /** Serve HTTPS with a fresh CA (upgraded sockets are then TLS sockets). */
  tls?: boolean;
}

export interface KubectlRun { code: number; stdout: string; stderr: string }

export interface StreamServer {
  readonly url: string;
  readonly dir: string;
  /** Upgrade requests seen: method, path and the protocol headers offered. */
  readonly upgrades: Array<{ method: string; path: string; protocols: string }>;
  kubectl(minor: number, args: string[], opts?: {
    input?: string | Buffer; env?: Record<string, string>; timeoutMs?: number;
  }): Promise<KubectlRun>;
  /** Starts kubectl and returns the child (port-forward). */
  spawnKubectl(minor: number, args: string[], env?: Record<string, string>): ReturnType<typeof spawn>;
  close(): Promise<void>;
}

const POD = {
  kind: 'Pod', apiVersion: 'v1',
  metadata: { name: 'p', namespace: 'default', uid: '6f1b7c1e-0000-4000-8000-000000000001',
    resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: {
    nodeName: 'n1',
    containers: [{ name: 'c', image: 'kdp/echo', stdin: true, tty: true,
      ports: [{ containerPort: 80, protocol: 'TCP' }] }],
  },
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True' }],
    containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'kdp/echo', imageID: '',
      state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }],
  },
};

const RESOURCES = {
  kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1',
  resources: [
    { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'],
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
    { name: 'pods/attach', singularName: '', namespaced: true, kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { name: 'pods/exec', singularName: '', namespaced: true, kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions',
      verbs: ['create', 'get'] },
  ],
};

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function onRequest(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/api') return json(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
  if (path === '/apis') return json(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
  if (path === '/api/v1') return json(res, 200, RESOURCES);
  if (path === '/version') {
    return json(res, 200, { major: '1', minor: '33', gitVersion: 'v1.33.0', platform: 'linux/amd64' });
  }
  if (path === '/api/v1/namespaces/default/pods/p') return json(res, 200, POD);
  json(res, 404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `the server could not find the requested resource`, reason: 'NotFound', code: 404 });
}

function streamOptions(q: URLSearchParams): StreamOptions {
  const on = (k: string): boolean => q.get(k) === 'true' || q.get(k) === '1';
  return { stdin: on('stdin'), stdout: on('stdout'), stderr: on('stderr'), tty: on('tty') };
}

export async function startStreamServer(opts: StreamServerOptions): Promise<StreamServer> {
  const upgrades: StreamServer['upgrades'] = [];
  let caPem = '';
  let server: Server;
  if (opts.tls) {
    const ca = await issueCa('streaming-test-ca');
    const leaf = await issueLeaf(ca, { commonName: '127.0.0.1', usage: 'server', sans: ['IP:127.0.0.1'] });
    caPem = ca.certPem;
    server = createHttpsServer({ cert: leaf.certPem, key: leaf.keyPem }, onRequest);
  } else {
    server = createServer(onRequest);
  }
  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    const url = new URL(req.url ?? '/', 'http://x');
    upgrades.push({ method: req.method ?? '', path: url.pathname,
      protocols: String(req.headers['sec-websocket-protocol'] ?? req.headers['x-stream-protocol-version'] ?? '') });
    const m = /^\/api\/v1\/namespaces\/default\/pods\/([^/]+)\/(exec|attach|portforward)$/.exec(url.pathname);
    if (!m || m[1] !== 'p') {
      refuseUpgrade(socket, 404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
        message: `pods "${m?.[1] ?? ''}" not found`, reason: 'NotFound', code: 404 });
      return;
    }
    const kind = m[2]!;
    if (opts.refuseWebSocket && String(req.headers.upgrade).toLowerCase() === 'websocket') {
      refuseUpgrade(socket, 400, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
        message: 'websocket not supported here', reason: 'BadRequest', code: 400 });
      return;
    }
    if (kind === 'portforward') {
      const ports = url.searchParams.getAll('ports').flatMap((p) => p.split(',')).map(Number);
      void servePortForward(req, socket, head, ports.length ? ports : undefined,
        opts.dial ?? (() => Promise.reject(new Error('no dialer'))));
      return;
    }
    const so = streamOptions(url.searchParams);
    const argv = url.searchParams.getAll('command');
    void serveRemoteCommand(req, socket, head, so, () => opts.start(kind as 'exec' | 'attach', argv, so));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'kdp-streaming-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: t', '  cluster:', `    server: "${url}"`,
    ...(caPem ? [`    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`] : []),
    'users:', '- name: u', '  user: {token: t}',
    'contexts:', '- name: t', '  context: {cluster: t, user: u, namespace: default}',
    'current-context: t', ''].join('\n'));
  const envFor = (minor: number, env: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH ?? '', HOME: dir, ...env, KUBECONFIG: kubeconfig,
    KUBECACHEDIR: join(dir, `cache-${minor}`),
  });
  const spawnKubectl: StreamServer['spawnKubectl'] = (minor, args, env) =>
    spawn(kubectlPath(minor), ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, `cache-${minor}`), ...args],
      { env: envFor(minor, env), stdio: ['pipe', 'pipe', 'pipe'] });
  return {
    url, dir, upgrades, spawnKubectl,
    kubectl(minor, args, o = {}) {
      return new Promise((resolve) => {
        const child = spawnKubectl(minor, args, o.env);
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        child.stdout!.on('data', (c: Buffer) => out.push(c));
        child.stderr!.on('data', (c: Buffer) => err.push(c));
        const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code: code ?? 137, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
        });
        child.stdin!.on('error', () => {});
        if (o.input !== undefined) child.stdin!.end(o.input);
        else child.stdin!.end();
      });
    },
    async close() {
      server.closeAllConnections();
      for (const s of upgraded) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
