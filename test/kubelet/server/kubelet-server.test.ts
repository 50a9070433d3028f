// The kubelet API's authentication and authorisation as upstream's defaults: no client
// certificate → 401, a CA-signed user the SubjectAccessReview refuses → 403 with upstream's text
// naming the nodes subresource the path maps to; allowed users reach /healthz, /pods and
// /containerLogs; exec on a node without a streaming runtime is a clear Status.

import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from 'node:https';
import type { Pod } from '../../../src/api/types.js';
import { issueCa, issueClientCertificate, issueLeaf, type CertPair } from '../../../src/apiserver/pki/index.js';
import { buildKubeletServer } from '../../../src/kubelet/server/kubelet-server.js';

interface Reply { code: number; type: string; body: string }

let ca: CertPair;
let admin: CertPair;
let nobody: CertPair;
let server: Server;
let port = 0;
const asked: string[] = [];

const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'kdp/echo' }] } } as Pod;

function get(path: string, who?: CertPair, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca: ca.certPem, servername: 'n1', headers,
      ...(who ? { cert: who.certPem, key: who.keyPem } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () =>
        resolve({ code: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('error', reject).end();
  });
}

beforeAll(async () => {
  ca = await issueCa('kdp-test-ca');
  const serving = await issueLeaf(ca, { commonName: 'n1', usage: 'server', sans: ['DNS:n1', 'IP:127.0.0.1'] });
  admin = await issueClientCertificate(ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] });
  nobody = await issueClientCertificate(ca, { commonName: 'jane' });
  server = buildKubeletServer({
    nodeName: 'n1', tls: { ...serving, caPem: ca.certPem },
    async authorize(user, verb, subresource) {
      asked.push(`${user.name} ${verb} ${subresource}`);
      return user.groups.includes('system:masters');
    },
    pod: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined),
    pods: () => [pod],
    containerLogs: async function* () { yield Buffer.from('one\ntwo\nthree\n'); },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => { server?.close(); });

describe('kubelet API authentication and authorisation', () => {
  it('answers a request without a client certificate 401 Unauthorized', async () => {
    const r = await get('/pods');
    expect(r.code).toBe(401);
    expect(r.body).toBe('Unauthorized\n');
  });

  it('answers a certificate from another CA 401', async () => {
    const other = await issueCa('kdp-other-ca');
    const stranger = await issueClientCertificate(other, { commonName: 'system:masters-impostor', organizations: ['system:masters'] });
    expect((await get('/healthz', stranger)).code).toBe(401);
  });

  it('answers a user the SubjectAccessReview refuses 403 naming the subresource', async () => {
    expect(await get('/pods', nobody)).toMatchObject({ code: 403,
      body: 'Forbidden (user=jane, verb=get, resource=nodes, subresource=proxy)\n' });
    expect((await get('/metrics', nobody)).body).toContain('subresource=metrics)');
    expect((await get('/stats/summary', nobody)).body).toContain('subresource=stats)');
    expect((await get('/logs/', nobody)).body).toContain('subresource=log)');
    // isSubpath as upstream: /statsx is not under /stats
    expect((await get('/statsx', nobody)).body).toContain('subresource=proxy)');
  });

  it('serves /healthz, /pods, /runningpods/ and /metrics to an allowed user', async () => {
    expect(await get('/healthz', admin)).toMatchObject({ code: 200, body: 'ok' });
    const pods = await get('/pods', admin);
    expect(pods.code).toBe(200);
    expect(JSON.parse(pods.body)).toMatchObject({ kind: 'PodList', apiVersion: 'v1', items: [{ metadata: { name: 'web' } }] });
    const running = JSON.parse((await get('/runningpods/', admin)).body);
    expect(running.items[0]).toMatchObject({ metadata: { name: 'web', namespace: 'default', uid: 'u1' },
      spec: { containers: [{ name: 'c', image: 'kdp/echo' }] } });
    const metrics = await get('/metrics', admin);
    expect(metrics.code).toBe(200);
    expect(metrics.type).toContain('text/plain');
    expect(asked).toContain('kube-apiserver-kubelet-client get proxy');
  });

  it('serves container logs to an allowed user (options: kubelet-container-logs.test.ts)', async () => {
    expect(await get('/containerLogs/default/web/c?tailLines=2', admin)).toMatchObject({ code: 200,
      body: 'one\ntwo\nthree\n' });
  });

  it('answers exec on a node without processes with a Status saying so', async () => {
    const r = await get('/exec/default/web/c?command=true&output=1', admin,
      { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' });
    expect(r.code).toBe(400);
    const st = JSON.parse(r.body);
    expect(st).toMatchObject({ kind: 'Status', status: 'Failure', code: 400 });
    expect(st.message).toContain('virtual nodes run no processes');
    expect(st.message).toContain('sudo kdp up');
  });
});
