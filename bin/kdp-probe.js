#!/usr/bin/env node
// kdp's live prober: one long-lived process per network namespace (started with
// `ip netns exec NS node bin/kdp-probe.js --name NAME`) that both answers and sends probes, so
// thousands of probes cost no process start each. Protocol: JSON lines.
//   stdin  {"id":1,"op":"listen","ports":[{"port":80,"protocol":"tcp","address":"10.0.0.5"}]}
//   stdin  {"id":2,"op":"probe","protocol":"tcp","source":"10.0.0.5","destination":"10.96.0.1",
//           "port":80,"sport":0,"timeoutMs":1000}
//   stdout {"ready":true,"name":"…"} once, then {"id":N,…} per request (any order).
// Listeners answer every TCP connection and UDP datagram with one line
// `pod=<name> from=<peer ip>:<port> to=<local ip>:<port>` (as bin/kdp-echo.js, plus `to=`).
// A listener without an address binds the wildcard (TCP sees its local address; UDP cannot,
// so it leaves `to=` out): bind UDP per address where the served address matters.
// Plain JS with node built-ins only.
import { createServer, connect } from 'node:net';
import { createSocket } from 'node:dgram';
import { execFile } from 'node:child_process';
import { createInterface } from 'node:readline';

const nameAt = process.argv.indexOf('--name');
const name = nameAt > 0 ? process.argv[nameAt + 1] : 'probe';
const isV6 = (ip) => ip.includes(':');
const plain = (ip) => (ip ?? '').replace(/^::ffff:(?=\d+\.)/, '');
const hp = (ip, port) => (isV6(plain(ip)) ? `[${plain(ip)}]:${port}` : `${plain(ip)}:${port}`);
const line = (peer, peerPort, local, localPort) =>
  `pod=${name} from=${hp(peer, peerPort)}${local ? ` to=${hp(local, localPort)}` : ''}\n`;
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const servers = [];

function listenTcp(port, address) {
  return new Promise((resolve, reject) => {
    const srv = createServer((s) => {
      s.on('error', () => {});
      s.resume(); // read and drop what the client sends, so closing never resets
      s.end(line(s.remoteAddress, s.remotePort, s.localAddress, s.localPort));
    });
    srv.once('error', reject);
    const host = address ?? '::';
    srv.listen({ port, host, ipv6Only: false }, () => resolve(servers.push(srv)));
  });
}

function listenUdp(port, address) {
  return new Promise((resolve, reject) => {
    const v6 = address === undefined || isV6(address);
    const sock = createSocket({ type: v6 ? 'udp6' : 'udp4', reuseAddr: true, ipv6Only: false });
    sock.on('message', (_m, r) => {
      const body = line(r.address, r.port, address, port);
      sock.send(body, r.port, r.address, () => {});
    });
    sock.once('error', reject);
    sock.bind({ port, address: address ?? '::' }, () => {
      sock.removeListener('error', reject);
      sock.on('error', () => {});
      resolve(servers.push(sock));
    });
  });
}

async function listen(req) {
  for (const p of req.ports ?? []) {
    if (p.protocol === 'udp') await listenUdp(p.port, p.address);
    else await listenTcp(p.port, p.address);
  }
  return { ok: true };
}

const UNREACH = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EACCES', 'EPERM', 'EADDRNOTAVAIL']);
const REFUSED = new Set(['ECONNREFUSED', 'ECONNRESET']);
const classify = (err) =>
  REFUSED.has(err.code) ? 'refused' : UNREACH.has(err.code) ? 'unreachable' : 'error';

function probeTcp(req, started) {
  return new Promise((resolve) => {
    let data = '';
    let done = false;
    const finish = (o) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...o, rttMs: performance.now() - started });
    };
    const opts = { host: req.destination, port: req.port };
    if (req.source) opts.localAddress = req.source;
    if (req.sport) opts.localPort = req.sport;
    const sock = connect(opts);
    const timer = setTimeout(() => finish({ outcome: 'timeout' }), req.timeoutMs ?? 1000);
    sock.setEncoding('utf8');
    // kdp-echo (the kdp/echo workload) answers only once the client has sent something.
    sock.on('connect', () => sock.write('probe\n'));
    sock.on('data', (d) => {
      data += d;
      if (data.includes('\n')) finish({ outcome: 'reply', line: data.split('\n')[0] });
    });
    sock.on('end', () => finish(data ? { outcome: 'reply', line: data.trim() }
      : { outcome: 'refused', error: 'closed without a reply' }));
    sock.on('error', (e) => finish({ outcome: classify(e), error: e.code ?? e.message }));
  });
}

function probeUdp(req, started) {
  return new Promise((resolve) => {
    let done = false;
    const v6 = isV6(req.destination);
    const sock = createSocket({ type: v6 ? 'udp6' : 'udp4' });
    const finish = (o) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try { sock.close(); } catch { /* already closed */ }
      resolve({ ...o, rttMs: performance.now() - started });
    };
    const timer = setTimeout(() => finish({ outcome: 'timeout' }), req.timeoutMs ?? 1000);
    sock.on('error', (e) => finish({ outcome: classify(e), error: e.code ?? e.message }));
    sock.on('message', (m) => finish({ outcome: 'reply', line: m.toString('utf8').trim() }));
    sock.bind({ address: req.source, port: req.sport ?? 0 }, () => {
      sock.connect(req.port, req.destination, (err) => {
        if (err) return finish({ outcome: classify(err), error: err.code ?? err.message });
        sock.send('probe\n', (e) => e && finish({ outcome: classify(e), error: e.code }));
      });
    });
  });
}

function probeIcmp(req, started) {
  const secs = String(Math.max(1, Math.ceil((req.timeoutMs ?? 1000) / 1000)));
  const args = ['-n', '-c', '1', '-W', secs];
  if (isV6(req.destination)) args.unshift('-6');
  if (req.source) args.push('-I', req.source);
  args.push(req.destination);
  return new Promise((resolve) => {
    execFile('ping', args, { timeout: (req.timeoutMs ?? 1000) + 2000 }, (err, stdout) => {
      const rttMs = performance.now() - started;
      if (!err) return resolve({ outcome: 'reply', rttMs });
      const text = String(stdout);
      if (/Unreachable|Prohibited|filtered/i.test(text)) {
        return resolve({ outcome: 'unreachable', rttMs, error: text.split('\n')[1]?.trim() });
      }
      resolve({ outcome: 'timeout', rttMs });
    });
  });
}

async function probe(req) {
  const started = performance.now();
  if (req.protocol === 'udp') return probeUdp(req, started);
  if (req.protocol === 'icmp') return probeIcmp(req, started);
  return probeTcp(req, started);
}

async function handle(req) {
  try {
    const res = req.op === 'listen' ? await listen(req) : await probe(req);
    out({ id: req.id, ...res });
  } catch (e) {
    out({ id: req.id, error: `${e.code ?? ''} ${e.message}`.trim() });
  }
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (l) => {
  if (!l.trim()) return;
  let req;
  try { req = JSON.parse(l); } catch { return out({ error: `bad request line: ${l}` }); }
  void handle(req);
});
rl.on('close', () => {
  for (const s of servers) s.close();
  process.exit(0);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
out({ ready: true, name });
