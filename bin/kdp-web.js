#!/usr/bin/env node
// nginx-, httpd- and caddy-like images without a command: an HTTP server on each port of
// KDP_WEB_PORTS ("80,8080") answering `/` (and /index.html) with the server's default page and
// anything else with its 404 page, with its `Server` header (KDP_WEB_FLAVOR nginx|httpd|caddy,
// KDP_WEB_VERSION the image tag when it is a version). Access log on stdout in the server's
// format. Listens on `::` (dual-stack), 0.0.0.0 when the namespace has no IPv6. SIGTERM, SIGINT
// and SIGQUIT stop it with exit code 0, as the real servers' shutdown does.
import { createServer } from 'node:http';

const env = process.env;
const flavor = env.KDP_WEB_FLAVOR || 'nginx';
const version = env.KDP_WEB_VERSION || '';
const ports = (env.KDP_WEB_PORTS || '80').split(',').filter(Boolean).map(Number);

const NGINX_INDEX = `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
`;
const server = {
  nginx: version ? `nginx/${version}` : 'nginx',
  httpd: `Apache${version ? `/${version}` : ''} (Unix)`,
  caddy: 'Caddy',
}[flavor] ?? 'nginx';
const pages = {
  nginx: [NGINX_INDEX, `<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n` +
    `<center><h1>404 Not Found</h1></center>\r\n<hr><center>${server}</center>\r\n</body>\r\n</html>\r\n`],
  httpd: ['<html><body><h1>It works!</h1></body></html>\n',
    '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found' +
    '</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this ' +
    'server.</p>\n</body></html>\n'],
  caddy: ['<!DOCTYPE html>\n<html>\n<head><title>Caddy works!</title></head>\n<body>\n' +
    '<h1>Caddy works!</h1>\n</body>\n</html>\n', ''],
}[flavor] ?? [NGINX_INDEX, ''];

const pad = (n) => String(n).padStart(2, '0');
const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
const clf = (d) => `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
  `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;

function handle(req, res) {
  const path = (req.url ?? '/').split('?')[0];
  const found = path === '/' || path === '/index.html' || (flavor === 'caddy');
  const body = found ? pages[0] : pages[1];
  const status = found ? 200 : 404;
  const head = { Server: server, 'Content-Type': 'text/html', 'Content-Length': Buffer.byteLength(body) };
  if (flavor === 'nginx' && found) head['Accept-Ranges'] = 'bytes';
  res.writeHead(status, head);
  res.end(req.method === 'HEAD' ? undefined : body);
  const ip = (req.socket.remoteAddress ?? '-').replace(/^::ffff:/, '');
  const line = `${ip} - - [${clf(new Date())}] "${req.method} ${req.url} HTTP/${req.httpVersion}" ` +
    `${status} ${Buffer.byteLength(body)}`;
  console.log(flavor === 'httpd' ? line
    : `${line} "${req.headers.referer ?? '-'}" "${req.headers['user-agent'] ?? '-'}" "-"`);
}

function listen(port) {
  const s = createServer(handle);
  s.once('error', (e) => {
    if (e.code !== 'EAFNOSUPPORT' && e.code !== 'EADDRNOTAVAIL') {
      console.error(`bind() to [::]:${port} failed (${e.code})`);
      process.exit(1);
    }
    const s4 = createServer(handle);
    s4.once('error', (e4) => { console.error(`bind() to 0.0.0.0:${port} failed (${e4.code})`); process.exit(1); });
    s4.listen(port, '0.0.0.0');
  });
  s.listen(port, '::');
}

for (const p of ports) listen(p);
if (flavor === 'nginx') console.log('/docker-entrypoint.sh: Configuration complete; ready for start up');
else console.error(`${server} serving on ${ports.join(',')}`);
for (const sig of ['SIGTERM', 'SIGINT', 'SIGQUIT']) process.on(sig, () => process.exit(0));
