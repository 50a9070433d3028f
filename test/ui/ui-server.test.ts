// The web UI is authenticated like the API: 401 without credentials, a one-time link works
// once, its session cookie is HttpOnly/Secure/SameSite=Strict and may only read.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer, type ApiServer } from '../../src/apiserver/app.js';
import { buildAuthenticator, formatTokenLine } from '../../src/apiserver/authn/index.js';
import { buildMemoryStore } from '../../src/store/index.js';
import { SESSION_COOKIE } from '../../src/ui/server/ui-server.js';

const TOKEN = 'ui-test-token-0123456789';
let api: ApiServer;

function cookieOf(setCookie: string | string[] | undefined): string {
  const v = Array.isArray(setCookie) ? setCookie[0]! : setCookie ?? '';
  return v.split(';')[0]!;
}

async function login(): Promise<string> {
  const link = await api.app.inject({ method: 'POST', url: '/ui/links',
    headers: { authorization: `Bearer ${TOKEN}` } });
  expect(link.statusCode).toBe(201);
  const r = await api.app.inject({ method: 'GET', url: link.json().path });
  expect(r.statusCode).toBe(303);
  return cookieOf(r.headers['set-cookie']);
}

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-ui-auth-'));
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, formatTokenLine({ token: TOKEN,
    user: { name: 'alice', uid: '1', groups: ['system:masters'] } }));
  api = buildApiServer({ store: buildMemoryStore(), anonymous: true,
    authenticator: buildAuthenticator({ tokenFile }), ui: { dataDir: dir } });
});
afterAll(async () => { await api?.close(); });

describe('web UI authentication', () => {
  it('answers 401 without credentials: the page (a login form), its assets and its API', async () => {
    const page = await api.app.inject({ method: 'GET', url: '/ui/' });
    expect(page.statusCode).toBe(401);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('<form method="post" action="/ui/login">');
    expect(page.body).not.toContain('app.js');
    for (const url of ['/ui/assets/app.js', '/ui/api/whoami', '/ui/api/watch',
      '/ui/api/trace?src=a&dst=b', '/ui/api/rules/n1']) {
      const r = await api.app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(401);
    }
    expect((await api.app.inject({ method: 'POST', url: '/ui/links' })).statusCode).toBe(401);
  });

  it('a wrong bearer token is 401 too, with the login page', async () => {
    const r = await api.app.inject({ method: 'GET', url: '/ui/',
      headers: { authorization: 'Bearer wrong' } });
    expect(r.statusCode).toBe(401);
    expect(r.body).toContain('Bearer token');
  });

  it('serves the page and the bundle to the kubeconfig\'s bearer token', async () => {
    const page = await api.app.inject({ method: 'GET', url: '/ui/',
      headers: { authorization: `Bearer ${TOKEN}` } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/);
    const js = await api.app.inject({ method: 'GET', url: '/ui/assets/app.js',
      headers: { authorization: `Bearer ${TOKEN}` } });
    expect(js.statusCode).toBe(200);
    expect(js.body).not.toMatch(/https?:\/\/(cdn|unpkg|esm\.sh)/);
  });

  it('a one-time link opens a session once; the cookie is HttpOnly, Secure, SameSite=Strict', async () => {
    const link = await api.app.inject({ method: 'POST', url: '/ui/links',
      headers: { authorization: `Bearer ${TOKEN}` } });
    const { path } = link.json();
    const first = await api.app.inject({ method: 'GET', url: path });
    expect(first.statusCode).toBe(303);
    expect(first.headers.location).toBe('/ui/');
    const set = String(first.headers['set-cookie']);
    expect(set).toMatch(new RegExp(`^${SESSION_COOKIE}=[\\w-]{40,}; Path=/;`));
    for (const attr of ['HttpOnly', 'Secure', 'SameSite=Strict']) expect(set).toContain(attr);
    const again = await api.app.inject({ method: 'GET', url: path });
    expect(again.statusCode).toBe(401);
    expect(again.headers['set-cookie']).toBeUndefined();
    const cookie = cookieOf(first.headers['set-cookie']);
    const who = await api.app.inject({ method: 'GET', url: '/ui/api/whoami', headers: { cookie } });
    expect(who.json()).toEqual({ name: 'alice', groups: ['system:masters', 'system:authenticated'] });
  });

  it('the session reads the API as its user and may not write', async () => {
    const cookie = await login();
    const list = await api.app.inject({ method: 'GET', url: '/api/v1/namespaces', headers: { cookie } });
    expect(list.statusCode).toBe(200);
    const create = await api.app.inject({ method: 'POST', url: '/api/v1/namespaces',
      headers: { cookie, 'content-type': 'application/json' },
      payload: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }) });
    expect(create.statusCode).toBe(403);
    expect(create.json().message).toMatch(/read-only/);
    const del = await api.app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default',
      headers: { cookie } });
    expect(del.statusCode).toBe(403);
    // Nor exec, attach, port-forward (GET upgrades) or proxy through the API.
    for (const url of ['/api/v1/namespaces/default/pods/p/exec?command=sh',
      '/api/v1/namespaces/default/pods/p/portforward', '/api/v1/namespaces/default/pods/p/proxy/',
      '/api/v1/namespaces/default/services/s:80/proxy/x', '/api/v1/nodes/n1/proxy/metrics']) {
      const r = await api.app.inject({ method: 'GET', url, headers: { cookie } });
      expect(r.statusCode, url).toBe(403);
    }
    const upgrade = await api.app.inject({ method: 'GET', url: '/api/v1/namespaces',
      headers: { cookie, connection: 'Upgrade', upgrade: 'websocket' } });
    expect(upgrade.statusCode).toBe(403);
    // A session cannot mint links either (only the kubeconfig's credentials can).
    expect((await api.app.inject({ method: 'POST', url: '/ui/links', headers: { cookie } }))
      .statusCode).toBe(403);
  });

  it('an unknown or logged-out session cookie is no credential', async () => {
    const bogus = await api.app.inject({ method: 'GET', url: '/ui/',
      headers: { cookie: `${SESSION_COOKIE}=forged` } });
    expect(bogus.statusCode).toBe(401);
    const cookie = await login();
    const out = await api.app.inject({ method: 'GET', url: '/ui/logout', headers: { cookie } });
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await api.app.inject({ method: 'GET', url: '/ui/', headers: { cookie } })).statusCode)
      .toBe(401);
  });

  it('a pasted bearer token opens a session; a wrong one is refused', async () => {
    const ok = await api.app.inject({ method: 'POST', url: '/ui/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${TOKEN}` });
    expect(ok.statusCode).toBe(303);
    const cookie = cookieOf(ok.headers['set-cookie']);
    expect((await api.app.inject({ method: 'GET', url: '/ui/', headers: { cookie } })).statusCode)
      .toBe(200);
    const bad = await api.app.inject({ method: 'POST', url: '/ui/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'token=nope' });
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['set-cookie']).toBeUndefined();
  });

  it('refuses a login posted from another origin', async () => {
    const r = await api.app.inject({ method: 'POST', url: '/ui/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'localhost:6443',
        origin: 'https://evil.example' }, payload: `token=${TOKEN}` });
    expect(r.statusCode).toBe(403);
  });

  it('names the bad field of a trace or rules request', async () => {
    const cookie = await login();
    const t = await api.app.inject({ method: 'GET', url: '/ui/api/rules/..%2Fx', headers: { cookie } });
    expect(t.statusCode).toBe(400);
    expect(t.json().message).toMatch(/node/);
    const k = await api.app.inject({ method: 'GET', url: '/ui/api/watch?kinds=secrets', headers: { cookie } });
    expect(k.statusCode).toBe(400);
    expect(k.json().message).toMatch(/kinds: "secrets"/);
  });
});
