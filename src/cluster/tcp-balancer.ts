// One address in front of several API servers (`kdp up --apiservers N`), as kubeadm HA clusters
// put a TCP load balancer (haproxy, kube-vip) before their kube-apiservers: layer 4 only, so TLS
// runs end to end between the client and the API server it lands on, and each connection stays
// on one server. New connections go round-robin to the backends; a backend that refuses one is
// skipped (the next is tried at once) and left alone for `holdDownMs`, so a stopped API server
// costs clients nothing but their open connections.

import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Backend { readonly host: string; readonly port: number }

export interface TcpBalancer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface TcpBalancerOptions {
  readonly host?: string;
  readonly port: number;
  readonly backends: () => readonly Backend[];
  readonly holdDownMs?: number;
  readonly connectTimeoutMs?: number;
}

export async function startTcpBalancer(o: TcpBalancerOptions): Promise<TcpBalancer> {
  const holdDown = o.holdDownMs ?? 2_000;
  const down = new Map<string, number>();
  const key = (b: Backend) => `${b.host}:${b.port}`;
  const open = new Set<Socket>();
  let next = 0;

  const dial = (b: Backend) => new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: b.host, port: b.port });
    const timer = setTimeout(() => s.destroy(new Error('connect timeout')), o.connectTimeoutMs ?? 1_000);
    s.once('connect', () => { clearTimeout(timer); resolve(s); });
    s.once('error', (e) => { clearTimeout(timer); reject(e); });
  });

  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    void (async () => {
      const list = o.backends();
      const now = Date.now();
      // Round-robin over the backends not held down; when all are, try them all anyway.
      const order = Array.from({ length: list.length }, (_, i) => list[(next + i) % list.length]!);
      next = (next + 1) % Math.max(1, list.length);
      const up = order.filter((b) => (down.get(key(b)) ?? 0) <= now);
      for (const b of up.length ? up : order) {
        if (client.destroyed) return;
        let upstream: Socket;
        try {
          upstream = await dial(b);
        } catch {
          down.set(key(b), Date.now() + holdDown);
          continue;
        }
        down.delete(key(b));
        open.add(upstream);
        upstream.once('close', () => open.delete(upstream));
        upstream.setNoDelay(true);
        client.setNoDelay(true);
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        return;
      }
      client.destroy(); // no API server answers: the client sees the connection refused/reset
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  const addr = server.address() as { address: string; port: number };
  return {
    host: addr.address, port: addr.port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of open) s.destroy();
    }),
  };
}
