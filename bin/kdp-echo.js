#!/usr/bin/env node
// The `kdp/echo` workload of netns mode: on each port of KDP_ECHO_PORTS ("80/TCP,53/UDP"), TCP
// and UDP both; answers every TCP connection (raw or HTTP) and every datagram with one line
// `pod=<name> from=<source ip>:<port>`: the pod name and the source address it saw (to check
// NAT). Plain JS, no imports beyond node: for a small footprint. Prints `ready` once listening.
import { createServer } from 'node:net';
import { createSocket } from 'node:dgram';

const pod = process.env.KDP_POD_NAME ?? 'unknown';
const specs = (process.env.KDP_ECHO_PORTS || '8080/TCP').split(',').filter(Boolean);
const ports = [...new Set(specs.map((s) => Number(s.split('/')[0])))];
const line = (ip, port) => `pod=${pod} from=${ip.replace(/^::ffff:/, '')}:${port}\n`;
let pending = ports.length * 2;
const listening = () => { if (--pending === 0) console.log(`ready pod=${pod} ports=${ports.join(',')}`); };

for (const port of ports) {
  const tcp = createServer((s) => {
    s.once('data', (d) => {
      const body = line(s.remoteAddress ?? '', s.remotePort ?? 0);
      if (/^[A-Z]+ \S+ HTTP\/1/.test(d.toString('latin1', 0, 64))) {
        s.end(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n` +
          `Connection: close\r\n\r\n${body}`);
      } else {
        s.end(body);
      }
    });
    s.on('error', () => {});
  });
  tcp.listen(port, '0.0.0.0', listening);
  const udp = createSocket('udp4');
  udp.on('message', (_m, r) => udp.send(line(r.address, r.port), r.port, r.address));
  udp.bind(port, '0.0.0.0', listening);
}
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
