// TCP sockets made inside a network namespace and used from kdp's own process, which stays in
// the host's namespace: a connection to a pod's loopback (port-forward), to a pod or endpoint
// address (the proxy subresources), or a server bound to an address that exists only in a
// namespace (the API server on the underlay gateway, a kubelet on its node's IP). One small
// helper per namespace, started with `nsenter --net=… node` (argument arrays), makes the socket
// there and hands it over by Node's IPC handle passing; the helper is reused for every socket of
// that namespace and holds kdp's event loop only while a request is in flight. A helper holds
// no socket once it has handed it over, so one idle for `idleMs` is let go (its IPC channel is
// closed and it exits); the next request starts a new one.

import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { kdpError } from '../errors.js';

export interface NetnsSockets {
  /** A TCP connection made from inside `netns` (a /run/netns name). Rejects with the
   *  connect error (its `code`, e.g. ECONNREFUSED, kept). */
  connect(netns: string, host: string, port: number): Promise<Socket>;
  /** A server bound inside `netns` and listening; connections arrive as on any net.Server. */
  listen(netns: string, host: string, port: number): Promise<Server>;
  close(): void;
}

const HELPER = `
const net = require('node:net');
process.on('message', (m) => {
  const fail = (e) => process.send({ id: m.id, error: String(e && e.message || e), code: e && e.code });
  if (m.op === 'connect') {
    const s = net.connect({ host: m.host, port: m.port });
    s.once('error', fail);
    s.once('connect', () => { s.removeListener('error', fail); s.pause(); process.send({ id: m.id }, s); });
  } else if (m.op === 'listen') {
    const srv = net.createServer();
    srv.once('error', fail);
    srv.listen({ host: m.host, port: m.port, backlog: 511 }, () => {
      process.send({ id: m.id }, srv, () => srv.close());
    });
  }
});
process.on('disconnect', () => process.exit(0));
`;

const NODE_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=32', '--v8-pool-size=0'];

interface Helper {
  readonly netns: string;
  readonly child: ChildProcess;
  readonly pending: Map<number, { resolve(h: unknown): void; reject(e: Error): void }>;
  idle?: NodeJS.Timeout;
}

export interface NetnsSocketsOptions {
  /** A helper without requests for this long exits (default 30 s). */
  readonly idleMs?: number;
}

export function netnsSockets(o: NetnsSocketsOptions = {}): NetnsSockets {
  const idleMs = o.idleMs ?? 30_000;
  const helpers = new Map<string, Helper>();
  let nextId = 1;
  const hold = (h: Helper) => {
    const on = h.pending.size > 0;
    const ch = h.child as ChildProcess & { channel?: { ref(): void; unref(): void } };
    clearTimeout(h.idle);
    if (on) { h.child.ref(); ch.channel?.ref(); return; }
    h.child.unref();
    ch.channel?.unref();
    h.idle = setTimeout(() => {
      if (h.pending.size > 0) return;
      if (helpers.get(h.netns) === h) helpers.delete(h.netns);
      if (h.child.connected) h.child.disconnect();
    }, idleMs);
    h.idle.unref();
  };
  const helperFor = (netns: string): Helper => {
    let h = helpers.get(netns);
    if (h && h.child.exitCode === null && h.child.connected) return h;
    const child = spawn('nsenter', [`--net=/run/netns/${netns}`, '--', process.execPath, ...NODE_FLAGS, '-e', HELPER], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'], detached: true,
    });
    let stderr = '';
    child.stderr!.on('data', (d) => { stderr = (stderr + d).slice(-500); });
    // Only a request in flight holds kdp's event loop (hold()), not the helper's error output.
    (child.stderr as unknown as { unref?(): void }).unref?.();
    const helper: Helper = { netns, child, pending: new Map() };
    const failAll = (why: string) => {
      for (const p of helper.pending.values()) p.reject(kdpError('KDP_HOST_EXEC', `netns ${netns}: ${why}`));
      helper.pending.clear();
      if (helpers.get(netns) === helper) helpers.delete(netns);
    };
    child.on('message', (m: { id: number; error?: string; code?: string }, handle: unknown) => {
      const p = helper.pending.get(m.id);
      if (!p) return;
      helper.pending.delete(m.id);
      hold(helper);
      if (m.error !== undefined) p.reject(Object.assign(new Error(m.error), { code: m.code }));
      else p.resolve(handle);
    });
    child.on('error', (e) => failAll(e.message));
    child.on('exit', (code) => {
      clearTimeout(helper.idle);
      failAll(`socket helper exited (${code})${stderr ? `: ${stderr.trim()}` : ''}`);
    });
    helpers.set(netns, helper);
    return helper;
  };
  const ask = <T>(netns: string, msg: Record<string, unknown>): Promise<T> => new Promise<T>((resolve, reject) => {
    const h = helperFor(netns);
    const id = nextId++;
    h.pending.set(id, { resolve: resolve as (x: unknown) => void, reject });
    hold(h);
    h.child.send({ ...msg, id }, (e) => {
      if (!e) return;
      h.pending.delete(id);
      hold(h);
      reject(kdpError('KDP_HOST_EXEC', `netns ${netns}: ${e.message}`));
    });
  });
  return {
    async connect(netns, host, port) {
      const s = await ask<Socket>(netns, { op: 'connect', host, port });
      // Streams (exec, port-forward) write small frames both ways: no Nagle delays.
      s.setNoDelay(true);
      s.resume();
      return s;
    },
    async listen(netns, host, port) {
      const srv = await ask<Server>(netns, { op: 'listen', host, port });
      srv.on('connection', (s: Socket) => s.setNoDelay(true));
      return srv;
    },
    close() {
      for (const h of helpers.values()) {
        clearTimeout(h.idle);
        h.child.kill();
      }
      helpers.clear();
    },
  };
}

/** Loopback sockets that ignore the namespace (tests; virtual mode). */
export function fakeNetnsSockets(): NetnsSockets {
  return {
    connect: (_netns, host, port) => new Promise<Socket>((resolve, reject) => {
      const s = connect({ host, port });
      s.once('error', reject);
      s.once('connect', () => { s.removeListener('error', reject); resolve(s); });
    }),
    listen: (_netns, host, port) => new Promise<Server>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen({ host, port }, () => { srv.removeListener('error', reject); resolve(srv); });
    }),
    close() { /* nothing held */ },
  };
}
