// The client end of a node's runtime endpoint (server.ts), as crictl's: CRI calls as JSON over
// the unix socket, a container's log as a stream, and exec sessions over the WebSocket channel
// protocol (v5.channel.k8s.io: stdin, stdout, stderr, the exit Status, terminal resizes).

import { request } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import WebSocket from 'ws';
import { kdpError, type ErrorCode } from '../../errors.js';

export interface RuntimeEndpointClient {
  call<T = Record<string, unknown>>(method: string, body?: object): Promise<T>;
  /** Writes the container's log to `out`; with follow, until the container stops. */
  logs(id: string, opts: { follow?: boolean; tailLines?: number }, out: (text: string) => void): Promise<void>;
  /** An exec session on the streams given; resolves to the command's exit code. */
  exec(url: string, io: ExecIO): Promise<number>;
}

export interface ExecIO {
  readonly stdin?: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** The terminal's size now and on each change (tty sessions). */
  readonly size?: () => { cols: number; rows: number } | undefined;
  readonly onResize?: (listener: () => void) => () => void;
}

/** Why the socket cannot be used, in words naming the socket (crictl's "connect: permission
 *  denied" with the hint). */
function connectError(path: string, e: NodeJS.ErrnoException): Error {
  if (e.code === 'EACCES') {
    return kdpError('KDP_FORBIDDEN', `permission denied on the runtime endpoint ${path} (mode 0600, owned by the ` +
      'user the node runs as): run as that user (sudo for a netns cluster)');
  }
  if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED') {
    return kdpError('KDP_NOT_RUNNING', `no runtime endpoint answers at ${path} (is the node running?)`);
  }
  return kdpError('KDP_UNAVAILABLE', `runtime endpoint ${path}: ${e.message}`);
}

function failure(status: number, text: string): Error {
  try {
    const j = JSON.parse(text) as { code?: string; message?: string };
    if (j.code && j.message) return kdpError(j.code as ErrorCode, j.message);
  } catch { /* not ours */ }
  return kdpError('KDP_INTERNAL', `runtime endpoint answered ${status}: ${text.trim()}`);
}

export function buildRuntimeEndpointClient(socketPath: string): RuntimeEndpointClient {
  const send = (method: 'GET' | 'POST', path: string, body: string | undefined,
    onResponse: (status: number, res: Readable) => void, reject: (e: Error) => void) => {
    const req = request({ socketPath, method, path, headers: body === undefined ? {}
      : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
    (res) => onResponse(res.statusCode ?? 0, res));
    req.on('error', (e: NodeJS.ErrnoException) => reject(connectError(socketPath, e)));
    req.end(body);
  };
  const readAll = (res: Readable) => new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    res.on('data', (b: Buffer) => parts.push(b));
    res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    res.on('error', reject);
  });

  return {
    call<T>(method: string, body: object = {}) {
      return new Promise<T>((resolve, reject) => {
        send('POST', `/${method}`, JSON.stringify(body), (status, res) => {
          readAll(res).then((text) => {
            if (status !== 200) { reject(failure(status, text)); return; }
            resolve(JSON.parse(text) as T);
          }, reject);
        }, reject);
      });
    },
    logs(id, opts, out) {
      const q = new URLSearchParams();
      if (opts.follow) q.set('follow', 'true');
      if (opts.tailLines !== undefined) q.set('tailLines', String(opts.tailLines));
      return new Promise<void>((resolve, reject) => {
        send('GET', `/containerLogs/${encodeURIComponent(id)}?${q}`, undefined, (status, res) => {
          if (status !== 200) { readAll(res).then((t) => reject(failure(status, t)), reject); return; }
          res.setEncoding('utf8');
          res.on('data', (t: string) => out(t));
          res.on('end', () => resolve());
          res.on('error', reject);
        }, reject);
      });
    },
    exec(url, io) {
      return new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`ws+unix:${socketPath}:${url}`, ['v5.channel.k8s.io', 'v4.channel.k8s.io']);
        let status: { status?: string; reason?: string; message?: string;
          details?: { causes?: Array<{ reason?: string; message?: string }> } } | undefined;
        let stopResize = () => {};
        ws.on('unexpected-response', (_req, res) => {
          readAll(res).then((t) => reject(failure(res.statusCode ?? 0, t)), reject);
        });
        ws.on('error', (e: NodeJS.ErrnoException) => reject(e.code ? connectError(socketPath, e) : e));
        ws.on('open', () => {
          const resize = () => {
            const s = io.size?.();
            if (s) ws.send(Buffer.concat([Buffer.from([4]), Buffer.from(JSON.stringify({ Width: s.cols, Height: s.rows }))]));
          };
          resize();
          if (io.onResize) stopResize = io.onResize(resize);
          if (io.stdin) {
            io.stdin.on('data', (b: Buffer) => ws.send(Buffer.concat([Buffer.from([0]), b])));
            // v5: half-close stdin with [255, 0]; v4 has no such signal.
            io.stdin.on('end', () => { if (ws.protocol === 'v5.channel.k8s.io') ws.send(Buffer.from([255, 0])); });
          }
        });
        ws.on('message', (data: Buffer) => {
          const ch = data[0];
          const body = data.subarray(1);
          if (ch === 1) io.stdout.write(body);
          else if (ch === 2) io.stderr.write(body);
          else if (ch === 3 && body.length) {
            try { status = JSON.parse(body.toString('utf8')); } catch { status = { status: 'Failure', message: body.toString() }; }
          }
        });
        ws.on('close', () => {
          stopResize();
          io.stdin?.pause();
          if (!status || status.status === 'Success') { resolve(0); return; }
          const code = status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
          if (status.reason === 'NonZeroExitCode' && code !== undefined) { resolve(Number(code)); return; }
          reject(kdpError('KDP_INTERNAL', status.message ?? 'exec failed'));
        });
      });
    },
  };
}
