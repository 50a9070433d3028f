// kdp's port-forward data path in one process, no root (issue 13): kubectl → a stand-in API
// server (TLS) → the same relay as apiserver/proxy/pod-stream.ts (TLS client to the kubelet,
// streaming/gathered-pipe.ts both ways) → a kubelet HTTPS server serving
// streaming/port-forward.ts → the "pod" source. Side by side, interleaved rounds:
//  - direct: the measuring client straight to the source (both child processes);
//  - floor: the same sockets and TLS hops with no protocol (bytes piped TCP → TLS → TLS → a
//    TLS client child): what any JavaScript implementation of this path pays in Node's
//    sockets and TLS, per MB, in this process;
//  - kubectl 1.27 (SPDY) and 1.33 (SPDY in a WebSocket) port-forward.
// For each: MB/s, the ratio to direct (medians of per-round ratios), this process's CPU and
// minor page faults per MB, and kubectl's CPU per MB. On a 2-core machine the forwarded path's
// throughput is bounded by the sum of the CPU per MB of every process on it (bench/README.md).
//   node bin/run-ts.js bench/port-forward-path.ts      (BENCH_SCALE=0.25 for a quick run)

import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect as netConnect, createServer as createNetServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import { issueCa, issueLeaf } from '../src/apiserver/pki/issue.js';
import { pipeGathered } from '../src/streaming/gathered-pipe.js';
import { servePortForward } from '../src/streaming/index.js';
import { kubectlPath } from '../test/streaming/helpers/stream-server.js';
import { report } from './lib-bench.js';

const MB = Math.max(8, Math.round(128 * Number(process.env.BENCH_SCALE ?? 1)));
const ROUNDS = 5;
/** apiserver/proxy/pod-stream.ts's suites for the kubelet hop. */
const KUBELET_CIPHERS = 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256';

// Children: the source sends MB megabytes to each connection; `plain PORT`/`tls PORT` read one
// connection to its end and print MB/s by their own clock.
const SOURCE = `const net = require('node:net'); const b = Buffer.alloc(1 << 20, 97);
  net.createServer((s) => { let n = ${MB};
    const more = () => { while (n > 0) { n--; if (!s.write(b)) { s.once('drain', more); return; } } s.end(); }; more();
  }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
const CLIENT = `const [mode, port] = process.argv.slice(1);
  const s = mode === 'tls' ? require('node:tls').connect({ port: Number(port), host: '127.0.0.1', rejectUnauthorized: false })
    : require('node:net').connect(Number(port), '127.0.0.1');
  let b = 0; const t = performance.now(); s.on('data', (d) => { b += d.length; });
  s.on('end', () => console.log(b / 1048576 / ((performance.now() - t) / 1000)));`;

const POD = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', namespace: 'default', uid: 'u1', resourceVersion: '1' },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'kdp/echo' }] }, status: { phase: 'Running' } };
const API: Record<string, unknown> = {
  '/api/v1/namespaces/default/pods/p': POD,
  '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] },
  '/apis': { kind: 'APIGroupList', apiVersion: 'v1', groups: [] },
  '/api/v1': { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1', resources: [
    { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'], verbs: ['get', 'list'] },
    { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] }] },
};

const listening = <T extends { listen(port: number, host: string, cb: () => void): unknown; address(): unknown }>(s: T) =>
  new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
const tcp = (port: number) => new Promise<Socket>((resolve, reject) => {
  const c = netConnect(port, '127.0.0.1');
  c.once('connect', () => { c.setNoDelay(true); resolve(c); });
  c.once('error', reject);
});
/** A process's CPU time so far (user + system), ms. */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'kdp-bench-pf-'));
const source = spawn(process.execPath, ['-e', SOURCE], { stdio: ['ignore', 'pipe', 'inherit'] });
const children = [source];
const servers: Array<{ close(): unknown }> = [];
try {
  const sourcePort = await new Promise<number>((r) => source.stdout!.once('data', (d: Buffer) => r(Number(String(d).trim()))));
  const ca = await issueCa('bench-port-forward');
  const leaf = await issueLeaf(ca, { commonName: '127.0.0.1', usage: 'server', sans: ['IP:127.0.0.1'] });
  const tlsOpts = { cert: leaf.certPem, key: leaf.keyPem };

  // The kubelet: its HTTPS server hands the upgrade to src/streaming.
  const kubelet = createHttpsServer(tlsOpts);
  kubelet.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    (socket as Socket).setNoDelay(true);
    void servePortForward(req, socket, head, undefined, () => tcp(sourcePort));
  });
  const kubeletPort = await listening(kubelet);
  servers.push(kubelet);
  /** pod-stream.ts's relay: TLS to the kubelet, the request re-sent, bytes gathered both ways. */
  const relay = async (socket: Duplex, first: string, head: Buffer) => {
    const up = tlsConnect({ socket: await tcp(kubeletPort), ciphers: KUBELET_CIPHERS, rejectUnauthorized: false });
    await new Promise((r) => up.once('secureConnect', r));
    up.write(first);
    if (head.length) up.write(head);
    pipeGathered(up, socket);
    pipeGathered(socket, up);
    const close = () => { up.destroy(); socket.destroy(); };
    for (const s of [up, socket]) { s.once('close', close); s.on('error', close); }
  };
  const api = createHttpsServer(tlsOpts, (req: IncomingMessage, res: ServerResponse) => {
    const body = API[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
  });
  api.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    (socket as Socket).setNoDelay(true);
    const lines = [`${req.method} /portForward/default/p HTTP/1.1`, `Host: 127.0.0.1:${kubeletPort}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (!['host', 'authorization', 'content-length'].includes(req.rawHeaders[i]!.toLowerCase())) {
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      }
    }
    void relay(socket, `${lines.join('\r\n')}\r\n\r\n`, head).catch(() => socket.destroy());
  });
  const apiPort = await listening(api);
  servers.push(api);

  // The floor: the same hops with no protocol. The "kubelet" pipes the source into its TLS
  // socket; the "API server" relays that to its TLS client.
  const rawKubelet = createTlsServer(tlsOpts, (s) => {
    s.setNoDelay(true);
    void tcp(sourcePort).then((src) => { pipeGathered(src, s); s.on('error', () => src.destroy()); });
  });
  const rawKubeletPort = await listening(rawKubelet);
  servers.push(rawKubelet);
  const rawApi = createTlsServer(tlsOpts, (s) => {
    s.setNoDelay(true);
    void tcp(rawKubeletPort).then((raw) => {
      const up = tlsConnect({ socket: raw, ciphers: KUBELET_CIPHERS, rejectUnauthorized: false });
      pipeGathered(up, s);
      s.on('error', () => up.destroy());
    });
  });
  const rawApiPort = await listening(rawApi);
  servers.push(rawApi);

  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:${apiPort}\n` +
    '    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: bench\ncontexts:\n- name: c\n' +
    '  context: {cluster: c, user: u}\ncurrent-context: c\n');

  interface Path { readonly name: string; readonly mode: 'plain' | 'tls'; readonly port: number; readonly pid?: number }
  const paths: Path[] = [
    { name: 'direct (client to the source)', mode: 'plain', port: sourcePort },
    { name: 'floor: TCP → TLS → TLS, no protocol', mode: 'tls', port: rawApiPort },
  ];
  for (const minor of [27, 33].filter((m) => existsSync(kubectlPath(m)))) {
    const pf = spawn(kubectlPath(minor), ['--kubeconfig', kubeconfig, 'port-forward', '--address', '127.0.0.1', 'pod/p', ':9000'],
      { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(pf);
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      pf.stdout!.on('data', (d: Buffer) => {
        out += String(d);
        const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      pf.once('exit', () => reject(new Error(`kubectl 1.${minor} port-forward exited: ${out}`)));
    });
    paths.push({ name: `kubectl 1.${minor} port-forward`, mode: 'plain', port, pid: pf.pid! });
  }
  const client = (p: Path) => new Promise<number>((resolve, reject) =>
    execFile(process.execPath, ['-e', CLIENT, p.mode, String(p.port)], (e, out) => (e ? reject(e) : resolve(Number(out)))));

  const mbps = paths.map((): number[] => []);
  const cpu = paths.map((): number[] => []);
  const faults = paths.map((): number[] => []);
  const kubectlCpu = paths.map((): number[] => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < paths.length; k++) {
      const i = (k + r) % paths.length;
      const p = paths[i]!;
      const c0 = process.cpuUsage();
      const f0 = process.resourceUsage().minorPageFault;
      const k0 = p.pid ? cpuMs(p.pid) : 0;
      mbps[i]!.push(await client(p));
      const used = process.cpuUsage(c0);
      cpu[i]!.push((used.user + used.system) / 1000 / MB);
      faults[i]!.push((process.resourceUsage().minorPageFault - f0) / MB);
      if (p.pid) kubectlCpu[i]!.push((cpuMs(p.pid) - k0) / MB);
    }
  }
  const ratio = (i: number) => median(mbps[i]!.map((v, r) => v / mbps[0]![r]!));
  console.log(`download ${MB} MB ×${ROUNDS} rounds, interleaved; medians (load average ${loadavg()[0]!.toFixed(1)}):`);
  paths.forEach((p, i) => console.log(`  ${p.name.padEnd(38)} ${median(mbps[i]!).toFixed(0).padStart(5)} MB/s` +
    (i ? `  = ${ratio(i).toFixed(2)} of direct; this process ${median(cpu[i]!).toFixed(2)} ms CPU/MB, ` +
      `${median(faults[i]!).toFixed(0)} page faults/MB` +
      (p.pid ? `; kubectl ${median(kubectlCpu[i]!).toFixed(2)} ms CPU/MB` : '') : '')));
  for (let i = 2; i < paths.length; i++) {
    report(`${paths[i]!.name} / direct throughput`, ratio(i), 'ratio', { op: '>=', value: 0.5 });
    report(`${paths[i]!.name}: kdp CPU over the floor's`, median(cpu[i]!) / median(cpu[1]!), 'ratio');
  }
} finally {
  for (const c of children) c.kill();
  for (const s of servers) s.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
