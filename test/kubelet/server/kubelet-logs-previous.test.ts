// /containerLogs?previous=true reaches the runtime's previous run; no previous run is a 400 with
// upstream's message, as the kubelet answers.

import { request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/api/types.js';
import { issueCa, issueClientCertificate, issueLeaf, type CertPair } from '../../../src/apiserver/pki/index.js';
import { kdpError } from '../../../src/errors.js';
import { buildKubeletServer } from '../../../src/kubelet/server/kubelet-server.js';

let ca: CertPair;
let admin: CertPair;
let server: Server;
let port = 0;
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { nodeName: 'n1', containers: [{ name: 'c' }, { name: 'fresh' }] } } as Pod;

const get = (path: string) => new Promise<{ code: number; body: string }>((resolve, reject) => {
  request({ host: '127.0.0.1', port, path, ca: ca.certPem, servername: 'n1', cert: admin.certPem, key: admin.keyPem },
    (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; })
        .on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
});

beforeAll(async () => {
  ca = await issueCa('kdp-test-ca');
  const serving = await issueLeaf(ca, { commonName: 'n1', usage: 'server', sans: ['DNS:n1', 'IP:127.0.0.1'] });
  admin = await issueClientCertificate(ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] });
  server = buildKubeletServer({
    nodeName: 'n1', tls: { ...serving, caPem: ca.certPem },
    authorize: async () => true,
    pod: () => pod, pods: () => [pod],
    logs: (_ns, _pod, container, previous) => {
      if (!previous) return 'now\n';
      if (container === 'fresh') {
        throw kdpError('KDP_BAD_REQUEST', `previous terminated container "fresh" in pod "web" not found`);
      }
      return 'before\n';
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => { server?.close(); });

describe('kubelet /containerLogs previous', () => {
  it('serves the previous run, or 400 when there is none', async () => {
    expect(await get('/containerLogs/default/web/c')).toEqual({ code: 200, body: 'now\n' });
    expect(await get('/containerLogs/default/web/c?previous=true')).toEqual({ code: 200, body: 'before\n' });
    expect(await get('/containerLogs/default/web/fresh?previous=true')).toEqual({ code: 400,
      body: 'previous terminated container "fresh" in pod "web" not found' });
  });
});
