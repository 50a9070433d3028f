// The web UI's files: one JavaScript bundle (src/ui/web, with preact and htm from
// node_modules) built by esbuild in memory on first use (again after a source file changed),
// the style sheet, and the HTML shell.
// No CDN and no network: everything comes from the package. Building on first use follows
// bin/bundle-cache.js (kdp has no separate build step); a build takes ~0.1 s, once per process.

import { readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const WEB_DIR = fileURLToPath(new URL('../web/', import.meta.url));

export interface UiAssets {
  readonly js: string;
  readonly css: string;
}

let built: { stamp: string; assets: Promise<UiAssets> } | undefined;

/** Sizes and times of the UI's sources: an edited file makes the next request rebuild. */
function sourceStamp(): string {
  return readdirSync(WEB_DIR).sort().map((f) => {
    const st = statSync(`${WEB_DIR}${f}`);
    return `${f}:${st.size}:${st.mtimeMs}`;
  }).join('|');
}

/** The bundle and style sheet (built once per version of the sources; a failed build is
 *  retried on the next call). */
export function uiAssets(): Promise<UiAssets> {
  const stamp = sourceStamp();
  if (built?.stamp !== stamp) {
    const assets = buildAssets().catch((e: unknown) => {
      if (built?.assets === assets) built = undefined;
      throw e;
    });
    built = { stamp, assets };
  }
  return built.assets;
}

async function buildAssets(): Promise<UiAssets> {
  const { build } = await import('esbuild');
  const r = await build({
    entryPoints: [`${WEB_DIR}main.js`], bundle: true, format: 'esm', platform: 'browser',
    target: 'chrome110', minify: true, write: false, logLevel: 'silent', legalComments: 'none',
  });
  const css = await readFile(`${WEB_DIR}style.css`, 'utf8');
  return { js: r.outputFiles[0]!.text, css };
}

/** The page every view is served from (views are hash routes: `#/topology`, `#/trace`, …). */
export const SHELL_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kdp</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/ui/assets/app.css">
</head><body><div id="app"></div><script type="module" src="/ui/assets/app.js"></script>
</body></html>
`;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page of a request without a session (served with 401): paste the kubeconfig's token. */
export function loginHtml(message?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kdp — log in</title>
<link rel="stylesheet" href="/ui/assets/login.css"></head>
<body class="login"><main><h1>kdp</h1>
${message ? `<p class="error" role="alert">${escape(message)}</p>` : ''}
<p>Open the one-time link that <code>kdp up</code> or <code>kdp ui</code> prints, or paste the
bearer token of your kubeconfig (<code>kubectl config view --raw -o
jsonpath='{.users[0].user.token}'</code>).</p>
<form method="post" action="/ui/login"><label for="token">Bearer token</label>
<input id="token" name="token" type="password" autocomplete="off" autofocus required>
<button type="submit">Log in</button></form></main></body></html>
`;
}

/** The login page's style (served without a session, so it holds nothing of the cluster). */
export const LOGIN_CSS = `body.login{font:15px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1d2330}
.login main{max-width:34rem;margin:12vh auto;background:#fff;padding:2rem;border-radius:8px;
box-shadow:0 1px 4px #0002}.login h1{margin-top:0}.login .error{color:#a11}
.login label{display:block;font-weight:600;margin-top:1rem}.login input{width:100%;
padding:.5rem;font:inherit;box-sizing:border-box}.login button{margin-top:1rem;padding:.5rem 1.2rem;
font:inherit}code{background:#eef;padding:0 .2rem}
`;
