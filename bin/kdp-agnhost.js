#!/usr/bin/env node
// The parts of registry.k8s.io/e2e-test-images/agnhost that Kubernetes' network tests use, with
// upstream's flags, paths, response bodies and log lines (test/images/agnhost in
// kubernetes/kubernetes): `netexec`, `serve-hostname`, `pause`, `liveness` (/healthz, /started,
// /redirect) and `porter` (SERVE_PORT_n, SERVE_TCP_PORT_n, SERVE_UDP_PORT_n). The hostname is the
// process's (the pod's UTS namespace). Other subcommands exit 1 with cobra's error. The only shell
// is netexec's /shell, which runs the request's command with /bin/sh -c: that endpoint's contract.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { createServer, get, STATUS_CODES } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createServer as createTcpServer, isIP } from 'node:net';
import { hostname } from 'node:os';

const pad = (n, w = 2) => String(n).padStart(w, '0');
/** Go's log package prefix: `2006/01/02 15:04:05 `, on stderr. */
const log = (msg) => {
  const d = new Date();
  process.stderr.write(`${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${msg}\n`);
};
const fatal = (msg) => { log(msg); process.exit(1); };
/** Go's net.JoinHostPort of a peer, IPv4-mapped addresses shown as IPv4 (as Go does). */
const hostPort = (ip, port) => {
  const a = (ip ?? '').replace(/^::ffff:/, '');
  return a.includes(':') ? `[${a}]:${port}` : `${a}:${port}`;
};
/** Go's encoding/json escapes <, > and & in strings. */
const goJson = (v) => JSON.stringify(v).replace(/[<>&\u2028\u2029]/g,
  (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** Keys in Go's map order (sorted), empty ones left out by the callers. */
const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a < b ? -1 : 1));

const KLOG = new Set(['v', 'vmodule', 'logtostderr', 'alsologtostderr', 'log_dir', 'log_file',
  'log_file_max_size', 'stderrthreshold', 'skip_headers', 'skip_log_headers', 'add_dir_header',
  'one_output', 'log_backtrace_at']);

/** pflag-style parsing: `--name=value`, `--name value`, `--flag` for booleans. */
function parseFlags(args, spec) {
  const out = Object.fromEntries(Object.entries(spec).map(([k, [, def]]) => [k, def]));
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const m = /^--?([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) fatalUsage(`Error: unknown command "${a}" for "app"`);
    const [, name, inline] = m;
    if (KLOG.has(name)) { if (inline === undefined && name !== 'logtostderr' && name !== 'alsologtostderr' && name !== 'skip_headers') i++; continue; }
    const s = spec[name];
    if (!s) fatalUsage(`Error: unknown flag: --${name}`);
    const [type] = s;
    if (type === 'bool') { out[name] = inline === undefined ? true : inline === 'true' || inline === '1'; continue; }
    const raw = inline ?? args[++i];
    if (raw === undefined) fatalUsage(`Error: flag needs an argument: --${name}`);
    if (type === 'int') {
      if (!/^-?\d+$/.test(raw)) fatalUsage(`Error: invalid argument "${raw}" for "--${name}" flag: strconv.ParseInt: parsing "${raw}": invalid syntax`);
      out[name] = Number(raw);
    } else out[name] = raw;
  }
  return out;
}

function fatalUsage(msg) {
  process.stderr.write(`${msg}\nRun 'app --help' for usage.\n`);
  process.exit(1);
}

/** Go's time.ParseDuration, for /exit's `timeout` and `wait`; NaN when invalid. */
function parseDuration(s) {
  if (s === '0') return 0;
  const units = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let ms = 0;
  let m;
  let at = 0;
  const sign = s.startsWith('-') ? -1 : 1;
  const body = s.replace(/^[-+]/, '');
  re.lastIndex = 0;
  while ((m = re.exec(body))) { ms += Number(m[1]) * units[m[2]]; at = re.lastIndex; }
  return at === body.length && body.length > 0 ? sign * ms : NaN;
}

function send(res, status, body, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
/** Go's http.Error. */
const httpError = (res, msg, status) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  send(res, status, `${msg}\n`);
};

function redirect(res, location, code) {
  const body = `<a href="${location}">${STATUS_CODES[code] ?? ''}</a>.\n\n`;
  res.setHeader('Location', location);
  send(res, code, body, 'text/html; charset=utf-8');
}

/** Go's time.Time String(): `2006-01-02 15:04:05.999999999 +0000 UTC m=+0.01`. */
function goNow() {
  const d = new Date();
  const frac = `${pad(d.getUTCMilliseconds(), 3)}`.replace(/0+$/, '');
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}` +
    `${frac ? `.${frac}` : ''} +0000 UTC m=+${process.uptime().toFixed(9)}`;
}

// --- netexec

function netexec(args) {
  const f = parseFlags(args, {
    'http-port': ['int', 8080], 'udp-port': ['int', 8081], 'sctp-port': ['int', -1],
    'tls-cert-file': ['string', ''], 'tls-private-key-file': ['string', ''],
    'http-override': ['string', ''], 'udp-listen-addresses': ['string', ''],
  });
  let udpReady = false;
  let server;
  const routes = {
    '/clientip': (req, res) => { log('GET /clientip'); send(res, 200, hostPort(req.socket.remoteAddress, req.socket.remotePort)); },
    '/dial': dial,
    '/echo': (req, res, q) => {
      const msg = q.get('msg') ?? '';
      const code = q.get('code') ?? '';
      log(`GET /echo?msg=${msg}&code=${code}`);
      if (code !== '' && !/^[-+]?\d+$/.test(code)) { send(res, 200, `argument 'code' must be an integer or empty, got "${code}"\n`); return; }
      send(res, code === '' ? 200 : Number(code), msg);
    },
    '/exit': exit,
    '/healthz': (req, res) => { log('GET /healthz'); send(res, udpReady ? 200 : 412, ''); },
    '/hostname': (req, res) => { log('GET /hostname'); send(res, 200, hostname()); },
    '/hostName': (req, res) => { log('GET /hostName'); send(res, 200, hostname()); },
    '/redirect': (req, res, q) => {
      const location = q.get('location') ?? '';
      const code = q.get('code') ?? '';
      log(`${req.method} /redirect?msg=${location}&code=${code}`);
      if (code !== '' && !/^[-+]?\d+$/.test(code)) { send(res, 200, `argument 'code' must be an integer or empty, got "${code}"\n`); return; }
      redirect(res, location, code === '' ? 302 : Number(code));
    },
    '/shell': shell,
    '/shutdown': () => { log('GET /shutdown'); process.exit(0); },
  };
  const handler = (req, res) => {
    const url = new URL(f['http-override'] || req.url || '/', 'http://x');
    const route = routes[url.pathname] ?? ((_, r) => { log('GET /'); send(r, 200, `NOW: ${goNow()}`); });
    Promise.resolve(route(req, res, url.searchParams)).catch((e) => httpError(res, String(e), 500));
  };

  async function dial(req, res, q) {
    const [host, port, request, protocol, tryParam] =
      ['host', 'port', 'request', 'protocol', 'tries'].map((k) => q.get(k) ?? '');
    log(`GET /dial?host=${host}&protocol=${protocol}&port=${port}&request=${request}&tries=${tryParam}`);
    if (tryParam !== '' && !/^[-+]?\d+$/.test(tryParam)) {
      httpError(res, `tries parameter is invalid. strconv.Atoi: parsing "${tryParam}": invalid syntax`, 400);
      return;
    }
    const tries = tryParam === '' ? 1 : Number(tryParam);
    if (request === '') { httpError(res, 'request parameter not specified. <nil>', 400); return; }
    const proto = protocol.toLowerCase();
    if (proto !== '' && proto !== 'http' && proto !== 'udp') {
      httpError(res, proto === 'sctp' ? 'unsupported protocol. sctp (kdp has no SCTP)'
        : `unsupported protocol. ${protocol}`, 400);
      return;
    }
    let ip;
    try {
      if (!/^\d+$/.test(port) || Number(port) > 65535) throw new Error(`address ${port}: invalid port`);
      ip = isIP(host) ? host : (await lookup(host)).address;
    } catch (e) {
      httpError(res, `host and/or port param are invalid. ${e.message}`, 400);
      return;
    }
    const dialer = proto === 'udp' ? dialUdp : dialHttp;
    const responses = [];
    const errors = [];
    let last = '';
    for (let i = 0; i < tries; i++) {
      try { last = await dialer(request, ip, Number(port)); responses.push(last); }
      catch (e) { last = ''; errors.push(e.message); }
    }
    // Upstream lists the responses only when the last try answered something.
    const out = {};
    if (errors.length > 0) out.errors = errors;
    if (last.length > 0) out.responses = responses;
    send(res, 200, goJson(sorted(out)));
  }

  function shell(req, res, q) {
    const cmd = q.get('shellCommand') || q.get('cmd') || '';
    log(`GET /shell?cmd=${cmd}`);
    const chunks = [];
    const child = spawn('/bin/sh', ['-c', cmd], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    let spawnError;
    child.on('error', (e) => { spawnError = `fork/exec /bin/sh: ${e.message}`; });
    child.on('close', (code, signal) => {
      const out = {};
      const output = Buffer.concat(chunks).toString();
      if (spawnError) out.error = spawnError;
      else if (signal) out.error = `signal: ${signalName(signal)}`;
      else if (code !== 0) out.error = `exit status ${code}`;
      if (output.length > 0) out.output = output;
      log(`Output: map[${Object.entries(sorted(out)).map(([k, v]) => `${k}:${v}`).join(' ')}]`);
      send(res, 200, goJson(sorted(out)));
    });
  }

  function exit(req, res, q) {
    const [waitS, timeoutS, codeS] = ['wait', 'timeout', 'code'].map((k) => q.get(k) ?? '');
    log(`GET /exit?code=${codeS}&timeout=${timeoutS}&wait=${waitS}`);
    const timeout = timeoutS === '' ? 0 : parseDuration(timeoutS);
    if (Number.isNaN(timeout)) { send(res, 200, `argument 'timeout' must be a valid golang duration or empty, got "${timeoutS}"\n`); return; }
    const wait = waitS === '' ? 0 : parseDuration(waitS);
    if (Number.isNaN(wait)) { send(res, 200, `argument 'wait' must be a valid golang duration or empty, got "${waitS}"\n`); return; }
    if (codeS !== '' && !/^[-+]?\d+$/.test(codeS)) { send(res, 200, `argument 'code' must be an integer [0-127] or empty, got "${codeS}"\n`); return; }
    const code = codeS === '' ? 0 : Number(codeS);
    log(`Will begin shutdown in ${waitS || '0s'}, allowing ${timeoutS || '0s'} for connections to close, then will exit with ${code}`);
    setTimeout(() => {
      if (timeout === 0) process.exit(code);
      send(res, 200, '');
      server.close(() => { log('Graceful shutdown completed with: <nil>'); process.exit(code); });
      server.closeIdleConnections();
      setTimeout(() => { log('Graceful shutdown completed with: context deadline exceeded'); process.exit(code); }, timeout).unref();
    }, Math.max(0, wait));
  }

  if (f['udp-port'] !== -1) {
    const addrs = f['udp-listen-addresses'] ? [...new Set(f['udp-listen-addresses'].split(','))].sort() : [''];
    for (const a of addrs) {
      if (a !== '' && !isIP(a)) fatal(`parseAddress: invalid address ${a}`);
      udpServer(a, f['udp-port'], () => { udpReady = true; }, (text, rinfo) => {
        if (text === 'hostname') { log('Sending udp hostName response'); return hostname(); }
        if (text.startsWith('echo ')) { log(`Echoing ${text.slice(5)} to UDP client ${hostPort(rinfo.address, rinfo.port)}`); return text.slice(5); }
        if (text === 'clientip') { log(`Sending clientip back to UDP client ${hostPort(rinfo.address, rinfo.port)}`); return hostPort(rinfo.address, rinfo.port); }
        if (text.length > 0) log(`Unknown UDP command received from ${hostPort(rinfo.address, rinfo.port)}: ${text}`);
        return undefined;
      });
    }
  }
  if (f['sctp-port'] !== -1) log('SCTP is not available in kdp; --sctp-port ignored');
  server = f['tls-cert-file']
    ? createTlsServer({ cert: readFileSync(f['tls-cert-file']), key: readFileSync(f['tls-private-key-file'] || f['tls-cert-file']) }, handler)
    : createServer(handler);
  log(`Started HTTP server on port ${f['http-port']}`);
  server.on('error', (e) => fatal(`listen tcp :${f['http-port']}: bind: ${e.code === 'EADDRINUSE' ? 'address already in use' : e.message}`));
  server.listen(f['http-port']);
}

const SIGNALS = { SIGKILL: 'killed', SIGTERM: 'terminated', SIGINT: 'interrupt', SIGSEGV: 'segmentation fault', SIGABRT: 'aborted', SIGPIPE: 'broken pipe', SIGHUP: 'hangup', SIGQUIT: 'quit' };
const signalName = (s) => SIGNALS[s] ?? s;

const NET_ERRORS = { ECONNREFUSED: 'connection refused', EHOSTUNREACH: 'no route to host', ENETUNREACH: 'network is unreachable', ECONNRESET: 'connection reset by peer', ETIMEDOUT: 'i/o timeout' };

function dialHttp(request, ip, port) {
  const base = hostPort(ip, port);
  const url = `http://${base}/${request}`;
  return new Promise((resolve, reject) => {
    const req = get({ host: ip, port, path: `/${request.replace(/^\/+/, '')}`, agent: false, timeout: 5000 }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      res.on('error', (e) => reject(new Error(`Get "${url}": ${e.message}`)));
    });
    req.on('timeout', () => { req.destroy(); reject(new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)); });
    req.on('error', (e) => {
      const what = NET_ERRORS[e.code];
      reject(new Error(what ? `Get "${url}": dial tcp ${base}: connect: ${what}` : `Get "${url}": ${e.message}`));
    });
  });
}

function dialUdp(request, ip, port) {
  return new Promise((resolve, reject) => {
    const s = createSocket(isIP(ip) === 6 ? 'udp6' : 'udp4');
    const done = (fn) => { clearTimeout(t); s.close(); fn(); };
    const where = () => { try { const a = s.address(); return `${hostPort(a.address, a.port)}->${hostPort(ip, port)}`; } catch { return hostPort(ip, port); } };
    const t = setTimeout(() => done(() => reject(new Error(`reading from udp connection failed. err:'read udp ${where()}: i/o timeout'`))), 5000);
    s.on('message', (m) => done(() => m.length === 0
      ? reject(new Error("reading from udp connection failed. err:'<nil>'")) : resolve(m.toString())));
    s.on('error', (e) => done(() => reject(new Error(`reading from udp connection failed. err:'read udp ${where()}: read: ${NET_ERRORS[e.code] ?? e.message}'`))));
    s.connect(port, ip, () => s.send(request));
  });
}

/** A UDP server on `address` ('' = every address, dual-stack when the namespace has IPv6). */
function udpServer(address, port, onReady, answer) {
  const family = address === '' ? 'udp6' : isIP(address) === 6 ? 'udp6' : 'udp4';
  const s = createSocket(family);
  s.on('error', (e) => {
    if (address === '' && family === 'udp6' && (e.code === 'EAFNOSUPPORT' || e.code === 'EADDRNOTAVAIL')) {
      const s4 = createSocket('udp4');
      wire(s4);
      s4.bind(port, '0.0.0.0');
      return;
    }
    fatal(`Error occurred: failed to create listener for UDP address ${address}:${port}:${e.message}`);
  });
  function wire(sock) {
    sock.on('listening', () => { log(`Started UDP server on port ${address} ${port}`); onReady(); });
    sock.on('message', (buf, rinfo) => {
      const reply = answer(buf.toString().trim().toLowerCase(), rinfo);
      if (reply !== undefined) sock.send(reply, rinfo.port, rinfo.address);
    });
  }
  wire(s);
  s.bind(port, address || '::');
}

// --- serve-hostname

function serveHostname(args) {
  const f = parseFlags(args, { tcp: ['bool', false], udp: ['bool', false], http: ['bool', true], close: ['bool', false], port: ['int', 9376] });
  if (f.http && (f.tcp || f.udp)) fatal("Can't server TCP/UDP mode and HTTP mode at the same time");
  const name = hostname();
  const listenErr = (what) => (e) => fatal(`Error from ${what}: ${e.message}`);
  if (f.tcp) {
    createTcpServer((c) => {
      log(`TCP request from ${hostPort(c.remoteAddress, c.remotePort)}`);
      c.on('error', () => undefined);
      c.end(name);
    }).on('error', listenErr('net.Listen()')).listen(f.port);
  }
  if (f.udp) {
    udpServer('', f.port, () => undefined, (_, rinfo) => {
      log(`UDP request from ${hostPort(rinfo.address, rinfo.port)}`);
      return name;
    });
  }
  if (f.http) {
    createServer((req, res) => {
      log(`HTTP request from ${hostPort(req.socket.remoteAddress, req.socket.remotePort)}`);
      if (f.close) res.setHeader('Connection', 'close');
      send(res, 200, name);
    }).on('error', listenErr('http.ListenAndServe()')).listen(f.port);
  }
  log(`Serving on port ${f.port}.`);
  // As upstream: after SIGTERM it keeps serving for 60 s (until the kubelet kills it).
  process.once('SIGTERM', () => {
    log('Shutting down after receiving signal: terminated.');
    log('Awaiting pod deletion.');
    setTimeout(() => process.exit(0), 60_000);
  });
  setInterval(() => undefined, 1 << 30);
}

// --- pause, liveness, porter

function pause(args) {
  parseFlags(args, {});
  console.log('Paused');
  process.on('SIGINT', () => process.exit(1));
  process.on('SIGTERM', () => process.exit(2));
  setInterval(() => undefined, 1 << 30);
}

function liveness(args) {
  parseFlags(args, {});
  const started = Date.now();
  const secs = () => (Date.now() - started) / 1000;
  createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/started') send(res, 200, `${secs()}s`);
    else if (url.pathname === '/healthz') {
      if (secs() > 10) send(res, 500, `error: ${secs()}`);
      else send(res, 200, 'ok');
    } else if (url.pathname === '/redirect') redirect(res, url.searchParams.get('loc') ?? '', 302);
    else send(res, 404, '404 page not found\n');
  }).on('error', (e) => fatal(`listen tcp :8080: ${e.message}`)).listen(8080);
}

function porter(args) {
  const f = parseFlags(args, { 'json-response': ['bool', false] });
  for (const [key, value] of Object.entries(process.env)) {
    const m = /^SERVE_(PORT|TCP_PORT|UDP_PORT|TLS_PORT|SCTP_PORT)_(.*)$/.exec(key);
    if (!m) continue;
    const [, kind, port] = m;
    if (kind === 'UDP_PORT') {
      const s = createSocket('udp4');
      s.on('listening', () => log(`Started UDP server on port ${port}`));
      s.on('error', (e) => fatal(`UDP: failed to listen on port ${port}: ${e.message}`));
      s.on('message', (_, r) => s.send(value, r.port, r.address));
      s.bind(Number(port), '0.0.0.0');
    } else if (kind === 'PORT' || kind === 'TCP_PORT') {
      createServer((req, res) => {
        if (!f['json-response']) { send(res, 200, value); return; }
        send(res, 200, goJson({ Method: req.method, Body: value }), 'application/json');
      }).on('error', (e) => log(`server on port "${port}" failed: ${e.message}`)).listen(Number(port), '0.0.0.0');
    } else log(`${kind} is not emulated by kdp; ${key} ignored`);
  }
  setInterval(() => undefined, 1 << 30);
}

const COMMANDS = { netexec, 'serve-hostname': serveHostname, pause, liveness, porter };
const argv = process.argv.slice(2);
const at = argv.findIndex((a) => !a.startsWith('-'));
if (at < 0) {
  console.log(`agnhost (kdp emulation): ${Object.keys(COMMANDS).join(', ')}`);
  process.exit(0);
}
const sub = COMMANDS[argv[at]];
if (!sub) fatalUsage(`Error: unknown command "${argv[at]}" for "app"`);
sub([...argv.slice(0, at), ...argv.slice(at + 1)]);
