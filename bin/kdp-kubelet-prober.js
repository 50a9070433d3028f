#!/usr/bin/env node
// The kubelet's prober of netns mode, one long-lived process per node namespace (started with
// `ip netns exec <node>`), so probes go from the node to the pod IP as upstream's kubelet does,
// without a process per probe. JSON lines over stdio:
//   in:  {"id":1,"kind":"tcp","host":"10.244.0.5","port":8080,"timeoutMs":1000}
//        {"id":2,"kind":"http","host":..,"port":..,"path":"/","scheme":"HTTP","headers":[..],..}
//   out: {"id":1,"ok":true} | {"id":1,"ok":false,"message":"..."}
// HTTP: 200 ≤ status < 400 is success (redirects are not followed), as upstream's HTTP prober;
// HTTPS does not verify certificates. Plain JS, node: imports only. Exits when stdin closes.
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createInterface } from 'node:readline';

const reply = (id, ok, message) => process.stdout.write(`${JSON.stringify(ok ? { id, ok } : { id, ok, message })}\n`);

function tcp(r, done) {
  const s = connect({ host: r.host, port: r.port });
  const t = setTimeout(() => { s.destroy(); done(false, `dial tcp ${r.host}:${r.port}: i/o timeout`); }, r.timeoutMs);
  s.once('connect', () => { clearTimeout(t); s.destroy(); done(true); });
  s.once('error', (e) => { clearTimeout(t); done(false, `dial tcp ${r.host}:${r.port}: ${e.code ?? e.message}`); });
}

function http(r, done) {
  const headers = { 'User-Agent': 'kube-probe/1.33', Accept: '*/*', Connection: 'close' };
  for (const h of r.headers ?? []) headers[h.name] = h.value;
  const send = r.scheme === 'HTTPS' ? httpsRequest : httpRequest;
  const url = `${r.scheme === 'HTTPS' ? 'https' : 'http'}://${r.host.includes(':') ? `[${r.host}]` : r.host}:${r.port}`;
  const req = send({
    host: r.host, port: r.port, path: r.path || '/', method: 'GET', headers, agent: false,
    rejectUnauthorized: false, timeout: r.timeoutMs,
  }, (res) => {
    res.resume();
    const code = res.statusCode ?? 0;
    res.once('end', () => done(code >= 200 && code < 400, `HTTP probe failed with statuscode: ${code}`));
    res.once('error', () => done(false, `${url}: response error`));
  });
  req.once('timeout', () => req.destroy(new Error('context deadline exceeded')));
  req.once('error', (e) => done(false, `Get "${url}${r.path || '/'}": ${e.code ?? e.message}`));
  req.end();
}

createInterface({ input: process.stdin }).on('line', (l) => {
  let r;
  try { r = JSON.parse(l); } catch { return; }
  let answered = false;
  const done = (ok, message) => { if (!answered) { answered = true; reply(r.id, ok, message); } };
  try {
    if (r.kind === 'tcp') tcp(r, done);
    else if (r.kind === 'http') http(r, done);
    else done(false, `unknown probe kind ${r.kind}`);
  } catch (e) {
    done(false, String(e?.message ?? e));
  }
}).on('close', () => process.exit(0));
