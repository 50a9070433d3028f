// Helpers for port-forward tests: loopback "pod" servers and a running `kubectl port-forward`
// whose chosen local ports are read from its "Forwarding from" lines.

import type { ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import type { StreamServer } from './stream-server.js';

/** A TCP server on 127.0.0.1: random port; `handler` gets each connection. */
export async function tcpServer(handler: (s: Socket) => void): Promise<Server & { port: number }> {
  const srv = createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return Object.assign(srv, { port: (srv.address() as AddressInfo).port });
}

export const echoHandler = (s: Socket): void => {
  s.on('error', () => {});
  s.pipe(s);
};

/**
 * Answers each connection's first bytes with `tag` and closes: tells which "pod port" answered.
 * (It reads the request first, as a real server does: a server that closes with the request
 * unread races kubectl, which then resets the local connection, as it does upstream.)
 */
export const tagHandler = (tag: string) => (s: Socket): void => {
  s.on('error', () => {});
  s.once('data', () => s.end(tag));
};

export interface RunningForward {
  readonly child: ChildProcess;
  /** Local port per remote port, in the order given. */
  readonly ports: Map<number, number>;
  output(): string;
  stop(): Promise<void>;
}

export async function startForward(
  server: StreamServer, minor: number, remotePorts: number[], env?: Record<string, string>,
): Promise<RunningForward> {
  const child = server.spawnKubectl(minor,
    ['port-forward', '--address', '127.0.0.1', 'pod/p', ...remotePorts.map((p) => `:${p}`)], env);
  let out = '';
  const ports = new Map<number, number>();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`port-forward did not start: ${out}`)), 15_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      for (const m of out.matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)) {
        ports.set(Number(m[2]), Number(m[1]));
      }
      if (ports.size === remotePorts.length) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', () => reject(new Error(`port-forward exited: ${out}`)));
  });
  return {
    child, ports,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/**
 * Connects, sends `data`, half-closes, and returns everything received until the close, or
 * until `expectBytes` have arrived. A bulk echo passes `expectBytes`: after the client's
 * half-close the runtime gives the other direction 1 s (containerd's PortForward, socat's
 * default), which a loaded machine can outlast with echo still in flight.
 */
export function exchange(
  port: number, data: Buffer | string, timeoutMs = 10_000, expectBytes = Infinity,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const c = connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    let n = 0;
    const timer = setTimeout(() => {
      c.destroy();
      reject(new Error(`no close within ${timeoutMs} ms (${Buffer.concat(got).length} bytes)`));
    }, timeoutMs);
    c.on('data', (d: Buffer) => {
      got.push(d);
      n += d.length;
      if (n >= expectBytes) c.destroy();
    });
    c.on('error', (e) => { clearTimeout(timer); reject(e); });
    c.on('close', () => { clearTimeout(timer); resolve(Buffer.concat(got)); });
    c.end(data);
  });
}
