// The UI's log search (`/ui/api/logs`): the store `kdp logs` reads, with its filters, as the
// user — container lines need `pods/log` in their namespace (every namespace: cluster-wide),
// component lines `nodes/proxy` — bad filters refused naming them, the newest `limit` matches
// streamed with a count; and the trace endpoint's live mode refuses a cluster it cannot probe.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer, type ApiServer } from '../../src/apiserver/app.js';
import { buildAuthenticator, formatTokenLine } from '../../src/apiserver/authn/index.js';
import type { Authorizer } from '../../src/apiserver/pipeline-types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { recordProcess } from '../../src/host/process.js';
import { logStoreDir } from '../../src/logging/collector.js';
import { openLogWriter } from '../../src/logging/log-writer.js';
import type { ContainerSource } from '../../src/logging/record.js';
import { buildMemoryStore } from '../../src/store/index.js';

let api: ApiServer;
// alice may do anything; bob may read pods' logs in "default" only.
const authorizer: Authorizer = {
  async authorize(a) {
    const ok = a.user.name === 'alice' || (a.resource === 'pods' && a.subresource === 'log' && a.namespace === 'default');
    return { allowed: ok, reason: ok ? '' : 'not in the test policy' };
  },
};
const web = (pod: string, uid: string): ContainerSource => ({ kind: 'container', namespace: 'default', pod, uid,
  container: 'web', node: 'n1', labels: { app: 'web' } });
const T0 = Date.parse('2026-12-04T07:00:00Z');

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-ui-logs-'));
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify({ mode: 'virtual', proxyMode: 'iptables' }));
  // The cluster runs (in this process).
  writeFileSync(dataDirPaths(dir).pidFile, JSON.stringify(recordProcess(process.pid)));
  const w = openLogWriter({ dir: logStoreDir(dir), flushMs: 0 });
  const a = web('web-1', 'uid-1');
  const b = web('web-2', 'uid-2');
  for (let i = 0; i < 30; i++) w.append({ time: T0 + i * 1000, source: i % 2 ? a : b, stream: 'stdout', message: `GET /${i} 200` });
  w.append({ time: T0 + 40_000, source: { kind: 'component', component: 'kubelet', node: 'n1' }, stream: 'stderr',
    message: '"Event occurred" object="default/web-1" reason="Killing"' });
  w.append({ time: T0 + 41_000, source: { ...web('db-0', 'uid-3'), namespace: 'prod', labels: { app: 'db' } },
    stream: 'stdout', message: 'ready' });
  w.close();
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, formatTokenLine({ token: 'alice-token-123456', user: { name: 'alice', groups: [] } }) +
    formatTokenLine({ token: 'bob-token-1234567', user: { name: 'bob', groups: [] } }));
  api = buildApiServer({ store: buildMemoryStore(), authorizer, authenticator: buildAuthenticator({ tokenFile }),
    ui: { dataDir: dir } });
});
afterAll(async () => { await api?.close(); });

const get = (url: string, token = 'alice-token-123456') =>
  api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
const lines = (body: string) => body.trim().split('\n').map((l) => JSON.parse(l));

describe('UI log search', () => {
  it('streams the newest matches of kdp logs\' filters in time order, then how many matched', async () => {
    const r = await get('/ui/api/logs?selector=app%3Dweb&grep=GET%20%2F2%5Cd&limit=5');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/x-ndjson');
    const got = lines(r.body);
    expect(got.slice(0, -1).map((l) => l.message)).toEqual(['GET /25 200', 'GET /26 200', 'GET /27 200', 'GET /28 200', 'GET /29 200']);
    expect(got[0]).toMatchObject({ type: 'LINE', kind: 'container', node: 'n1', source: 'default/web-1/web', uid: 'uid-1',
      stream: 'stdout', time: '2026-12-04T07:00:25.000000Z' });
    expect(got.at(-1)).toEqual({ type: 'SCANNED', matched: 10, shown: 5 });
  });

  it('component lines, by node', async () => {
    const got = lines((await get('/ui/api/logs?component=kubelet&node=n1')).body);
    expect(got.map((l) => [l.kind, l.source, l.message])).toEqual([
      ['component', 'kubelet', '"Event occurred" object="default/web-1" reason="Killing"'], [undefined, undefined, undefined]]);
    expect(lines((await get('/ui/api/logs?component=kubelet&node=n2')).body)).toEqual([{ type: 'SCANNED', matched: 0, shown: 0 }]);
  });

  it('acts with the user\'s rights: pods/log of the namespace, cluster-wide for all, nodes/proxy for components', async () => {
    expect(lines((await get('/ui/api/logs?pod=web-1', 'bob-token-1234567')).body).at(-1)).toMatchObject({ matched: 15 });
    for (const [url, why] of [['/ui/api/logs?ns=prod', /pods\/log.* in the namespace "prod"/],
      ['/ui/api/logs?all=1', /pods\/log.* at the cluster scope/], ['/ui/api/logs?component=kubelet', /nodes\/proxy/]] as const) {
      const r = await get(url, 'bob-token-1234567');
      expect(r.statusCode, url).toBe(403);
      expect(r.json().message).toMatch(why);
    }
    expect((await api.app.inject({ method: 'GET', url: '/ui/api/logs' })).statusCode).toBe(401);
    expect(lines((await get('/ui/api/logs?all=1')).body).at(-1)).toMatchObject({ matched: 32 - 1 });
  });

  it('refuses bad filters naming them, before streaming anything', async () => {
    for (const [url, why] of [['/ui/api/logs?grep=a(', /--grep: .*Invalid regular expression/],
      ['/ui/api/logs?since=soon', /--since: "soon" is not a positive duration/],
      ['/ui/api/logs?selector=app%20in%20(x', /-l\/--selector/],
      ['/ui/api/logs?component=sshd', /--component: unknown component "sshd"/],
      ['/ui/api/logs?component=kubelet&pod=x', /--pod: .*cannot be combined with --component/],
      ['/ui/api/logs?limit=0', /limit: "0" is not a whole number/],
      ['/ui/api/logs?all=1&ns=prod', /ns: cannot be combined with all/]] as const) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(400);
      expect(r.json().message, url).toMatch(why);
    }
  });
});

describe('UI live trace', () => {
  it('is refused on a virtual cluster (400, saying why), and the cluster view says it is unavailable', async () => {
    const r = await get('/ui/api/trace?src=default%2Fa&dst=10.0.0.1%3A80&live=1');
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toMatch(/is virtual \(no kernel to send packets through\)/);
    expect((await get('/ui/api/cluster')).json().live).toMatchObject({ available: false,
      reason: expect.stringMatching(/virtual/) });
  });

  it('needs nodes/proxy: the probe runs inside the cluster\'s namespaces', async () => {
    const r = await get('/ui/api/trace?src=default%2Fa&dst=10.0.0.1%3A80&live=1', 'bob-token-1234567');
    expect(r.statusCode).toBe(403);
    expect(r.json().message).toMatch(/cannot get resource "nodes\/proxy"/);
  });
});
