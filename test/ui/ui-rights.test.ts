// The UI acts with its user's rights and no more: what RBAC would refuse the user, the UI's
// data endpoints refuse too (a kind in the watch stream, a node's rules, a trace).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer, type ApiServer } from '../../src/apiserver/app.js';
import { buildAuthenticator, formatTokenLine } from '../../src/apiserver/authn/index.js';
import type { Authorizer } from '../../src/apiserver/pipeline-types.js';
import { buildMemoryStore } from '../../src/store/index.js';

let api: ApiServer;
let dir: string;
// bob may read pods and nothing else; alice may do anything.
const authorizer: Authorizer = {
  async authorize(a) {
    const ok = a.user.name === 'alice' || (a.resource === 'pods' && ['get', 'list', 'watch'].includes(a.verb));
    return { allowed: ok, reason: ok ? '' : 'not in the test policy' };
  },
};

async function sessionOf(token: string): Promise<string> {
  const r = await api.app.inject({ method: 'POST', url: '/ui/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${token}` });
  expect(r.statusCode).toBe(303);
  return String(r.headers['set-cookie']).split(';')[0]!;
}

/** The watch stream's first line for nodes and for pods (it stays open: read until both came). */
async function watchLines(cookie: string): Promise<any[]> {
  await api.app.listen({ port: 0, host: '127.0.0.1' }).catch(() => undefined);
  const port = (api.app.server.address() as { port: number }).port;
  const ctl = new AbortController();
  const res = await fetch(`http://127.0.0.1:${port}/ui/api/watch?kinds=nodes,pods`,
    { headers: { cookie }, signal: ctl.signal });
  const lines: any[] = [];
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += Buffer.from(chunk).toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
    }
    if (lines.some((l) => l.kind === 'nodes') && lines.some((l) => l.kind === 'pods')) break;
  }
  ctl.abort();
  return ['nodes', 'pods'].map((k) => lines.find((l) => l.kind === k));
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kdp-ui-rights-'));
  mkdirSync(join(dir, 'nodes', 'n1', 'rules'), { recursive: true });
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify({ proxyMode: 'iptables' }));
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, formatTokenLine({ token: 'alice-token-123456', user: { name: 'alice', groups: [] } }) +
    formatTokenLine({ token: 'bob-token-1234567', user: { name: 'bob', groups: [] } }));
  api = buildApiServer({ store: buildMemoryStore(), authorizer,
    authenticator: buildAuthenticator({ tokenFile }), ui: { dataDir: dir } });
});
afterAll(async () => { await api?.close(); });

describe('the web UI reads with its user\'s rights', () => {
  it('streams the kinds the user may list, and says which it may not', async () => {
    const lines = await watchLines(await sessionOf('bob-token-1234567'));
    const byKind = Object.fromEntries(lines.map((l) => [l.kind, l]));
    expect(byKind.pods.type).toBe('RESET');
    expect(byKind.nodes.type).toBe('ERROR');
    expect(byKind.nodes.message).toMatch(/forbidden|cannot/i);
    const alice = await watchLines(await sessionOf('alice-token-123456'));
    expect(alice.map((l) => l.type)).toEqual(['RESET', 'RESET']);
  });

  it('refuses a node\'s rules and a trace to a user who may not read them', async () => {
    const cookie = await sessionOf('bob-token-1234567');
    const rules = await api.app.inject({ method: 'GET', url: '/ui/api/rules/n1', headers: { cookie } });
    expect(rules.statusCode).toBe(403);
    expect(rules.json().message).toMatch(/nodes\/proxy/);
    const ok = await api.app.inject({ method: 'GET', url: '/ui/api/rules/n1',
      headers: { cookie: await sessionOf('alice-token-123456') } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().snapshots).toEqual([]);
    const trace = await api.app.inject({ method: 'GET', url: '/ui/api/trace?src=n1&dst=10.96.0.1:443',
      headers: { cookie } });
    expect(trace.statusCode).toBe(403);
  });
});
