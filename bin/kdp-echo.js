#!/usr/bin/env node
// The `kdp/echo` workload of netns mode: on each port of KDP_ECHO_PORTS ("80/TCP,53/UDP"), TCP
// and UDP both; answers every TCP connection (raw or HTTP) and every datagram with one line
// `pod=<name> from=<source ip>:<port> to=<local ip>:<port>`: the pod name, the source address it
// saw (to check NAT) and the address it was reached at (IPv6 ones in brackets). TCP listens on
// `::` (dual-stack) when the namespace has IPv6, else 0.0.0.0; UDP binds each local address, so
// it knows which one a datagram came to. Prints `ready` once listening, then one line per request
// it answers: `tcp|udp from=<src> to=<local>`, HTTP `http from=… to=… <METHOD> <path>`
// (unprintable bytes as `?`, the path at most 200 bytes), as the native build.
// For probes and restarts: HTTP `GET /kdp/healthz` answers 200 while healthy, 503 otherwise;
// `GET /kdp/fail` and `/kdp/recover` switch (start state: KDP_ECHO_HEALTHY, default true);
// KDP_ECHO_EXIT_AFTER_MS makes it exit after that long with KDP_ECHO_EXIT_CODE (default 1).
// Plain JS, node: imports only, no HTTP module: a small footprint per pod.
import { createServer } from 'node:net';
import { createSocket } from 'node:dgram';
import { networkInterfaces } from 'node:os';

const env = process.env;
const pod = env.KDP_POD_NAME ?? 'unknown';
const specs = (env.KDP_ECHO_PORTS || '8080/TCP').split(',').filter(Boolean);
const ports = [...new Set(specs.map((s) => Number(s.split('/')[0])))];
let healthy = env.KDP_ECHO_HEALTHY !== 'false';
const addr = (ip, port) => {
  const a = (ip ?? '').replace(/^::ffff:/, '');
  return a.includes(':') ? `[${a}]:${port}` : `${a}:${port}`;
};
const line = (fromIp, fromPort, toIp, toPort) =>
  `pod=${pod} from=${addr(fromIp, fromPort)} to=${addr(toIp, toPort)}\n`;
const locals = Object.values(networkInterfaces()).flat()
  .filter((i) => i && !(i.family === 'IPv6' && i.scopeid)).map((i) => i.address);
let pending = ports.length * (1 + locals.length);
const logRequest = (kind, fromIp, fromPort, toIp, toPort, req) => {
  let l = `${kind} from=${addr(fromIp, fromPort)} to=${addr(toIp, toPort)}`;
  if (req !== undefined) {
    const first = req.split(/[\r\n]/, 1)[0].split(' ').slice(0, 2).join(' ').slice(0, 216);
    l += ` ${first.replace(/[^\x20-\x7e]/g, '?')}`;
  }
  process.stdout.write(`${l}\n`);
};
const listening = () => { if (--pending === 0) console.log(`ready pod=${pod} ports=${ports.join(',')}`); };

function http(s, head, body) {
  const path = head.split(' ')[1] ?? '/';
  let status = '200 OK';
  if (path === '/kdp/healthz') {
    if (!healthy) status = '503 Service Unavailable';
    body = healthy ? 'ok\n' : 'unhealthy\n';
  } else if (path === '/kdp/fail' || path === '/kdp/recover') {
    healthy = path === '/kdp/recover';
  }
  s.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n` +
    `Connection: close\r\n\r\n${body}`);
}

function onConnection(s) {
  s.once('data', (d) => {
    const body = line(s.remoteAddress, s.remotePort, s.localAddress, s.localPort);
    const head = d.toString('latin1', 0, 1024);
    const isHttp = /^[A-Z]+ \S+ HTTP\/1/.test(head);
    if (isHttp) http(s, head, body);
    else s.end(body);
    logRequest(isHttp ? 'http' : 'tcp', s.remoteAddress, s.remotePort, s.localAddress, s.localPort,
      isHttp ? head : undefined);
  });
  s.on('error', () => {});
}

function listenTcp(port) {
  const tcp = createServer(onConnection);
  tcp.once('error', () => { tcp.removeAllListeners('listening'); tcp.listen(port, '0.0.0.0', listening); });
  tcp.listen({ port, host: '::', ipv6Only: false }, listening);
}

function bindUdp(port, ip) {
  const udp = createSocket(ip.includes(':') ? 'udp6' : 'udp4');
  udp.on('message', (_m, r) => {
    udp.send(line(r.address, r.port, ip, port), r.port, r.address);
    logRequest('udp', r.address, r.port, ip, port);
  });
  udp.once('error', () => listening());
  udp.bind(port, ip, listening);
}

for (const port of ports) {
  listenTcp(port);
  for (const ip of locals) bindUdp(port, ip);
}
if (env.KDP_ECHO_EXIT_AFTER_MS) {
  setTimeout(() => process.exit(Number(env.KDP_ECHO_EXIT_CODE ?? 1)), Number(env.KDP_ECHO_EXIT_AFTER_MS));
}
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
