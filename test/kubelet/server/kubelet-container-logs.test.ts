// The kubelet's /containerLogs as upstream's: options from the query (tailLines, limitBytes,
// timestamps, sinceSeconds, sinceTime, previous, follow), the container's state deciding what
// is read (a waiting container, no previous run: 400 with upstream's texts), unknown pod or
// container 404, a bad query 400 / 422 — over HTTPS with a client certificate.

import { request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/api/types.js';
import { issueCa, issueClientCertificate, issueLeaf, type CertPair } from '../../../src/apiserver/pki/index.js';
import { memoryLogStore } from '../../../src/kubelet/container-log-files.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../../src/kubelet/runtime.js';
import { runtimeContainerLogs } from '../../../src/kubelet/server/container-logs.js';
import { buildKubeletServer } from '../../../src/kubelet/server/kubelet-server.js';

let ca: CertPair;
let admin: CertPair;
let server: Server;
let port = 0;
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { nodeName: 'n1', containers: [{ name: 'c' }, { name: 'fresh' }, { name: 'slow' }] } } as Pod;
const ref = { namespace: 'default', name: 'web', uid: 'u1' };
const store = memoryLogStore();
const statuses = new Map<string, RuntimeContainerStatus>();
const st = (name: string, s: Partial<RuntimeContainerStatus>): RuntimeContainerStatus =>
  ({ name, state: 'running', ready: true, restartCount: 0, containerID: `kdp://${name}`, ...s });

const get = (path: string, onData?: (s: string) => void) =>
  new Promise<{ code: number; body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, ca: ca.certPem, servername: 'n1', cert: admin.certPem, key: admin.keyPem },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => { body += c; onData?.(c); })
          .on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      }).on('error', reject).end();
  });

beforeAll(async () => {
  ca = await issueCa('kdp-test-ca');
  const serving = await issueLeaf(ca, { commonName: 'n1', usage: 'server', sans: ['DNS:n1', 'IP:127.0.0.1'] });
  admin = await issueClientCertificate(ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] });
  // c: ran once (run 0: "before"), restarted and running (run 1: "one".."three").
  const w0 = store.open(ref, 'c', 0);
  w0.write('stdout', 'before\n');
  w0.close();
  const w1 = store.open(ref, 'c', 1);
  w1.write('stdout', 'one\ntwo\n');
  await new Promise((r) => setTimeout(r, 30));
  w1.write('stdout', 'three\n');
  statuses.set('c', st('c', { restartCount: 1, lastTerminated: { exitCode: 1, reason: 'Error', containerID: 'kdp://old' } }));
  const wf = store.open(ref, 'fresh', 0);
  wf.write('stdout', 'hi\n');
  statuses.set('fresh', st('fresh', {}));
  statuses.set('slow', st('slow', { state: 'waiting', reason: 'ContainerCreating' }));
  const runtime = {
    logStore: store,
    podStatus: (uid: string): RuntimePodStatus | undefined =>
      (uid === 'u1' ? { uid, podIPs: [], containers: [...statuses.values()] } : undefined),
  };
  server = buildKubeletServer({
    nodeName: 'n1', tls: { ...serving, caPem: ca.certPem }, authorize: async () => true,
    pod: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined), pods: () => [pod],
    containerLogs: runtimeContainerLogs(runtime),
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => { server?.close(); });

describe('kubelet /containerLogs', () => {
  it('serves the current run, with tailLines, limitBytes and timestamps', async () => {
    expect(await get('/containerLogs/default/web/c')).toEqual({ code: 200, body: 'one\ntwo\nthree\n' });
    expect((await get('/containerLogs/default/web/c?tailLines=2')).body).toBe('two\nthree\n');
    expect((await get('/containerLogs/default/web/c?tail=1')).body).toBe('three\n');
    expect((await get('/containerLogs/default/web/c?limitBytes=5')).body).toBe('one\nt');
    expect((await get('/containerLogs/default/web/c?timestamps=true&tailLines=1')).body)
      .toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z three\n$/);
  });

  it('serves only lines since sinceTime / sinceSeconds', async () => {
    const stamped = (await get('/containerLogs/default/web/c?timestamps=true')).body.trim().split('\n');
    const third = stamped[2]!.split(' ')[0]!;
    // sinceTime is to the nanosecond here (RFC3339Nano is accepted as RFC3339 by Go).
    expect((await get(`/containerLogs/default/web/c?sinceTime=${encodeURIComponent(third)}`)).body).toBe('three\n');
    expect((await get('/containerLogs/default/web/c?sinceSeconds=3600')).body).toBe('one\ntwo\nthree\n');
  });

  it('serves the previous run, or 400 when there is none', async () => {
    expect(await get('/containerLogs/default/web/c?previous=true')).toEqual({ code: 200, body: 'before\n' });
    expect(await get('/containerLogs/default/web/fresh?previous=true')).toEqual({ code: 400,
      body: 'previous terminated container "fresh" in pod "web" not found' });
  });

  it('answers a waiting container, an unknown pod or container, and a bad query as upstream', async () => {
    expect(await get('/containerLogs/default/web/slow')).toEqual({ code: 400,
      body: 'container "slow" in pod "web" is waiting to start: ContainerCreating' });
    expect(await get('/containerLogs/default/nope/c')).toEqual({ code: 404, body: 'pod "nope" does not exist' });
    expect(await get('/containerLogs/default/web/zz')).toEqual({ code: 404,
      body: 'container "zz" not found in pod "web"' });
    expect(await get('/containerLogs/default/web/c?tailLines=x')).toEqual({ code: 400,
      body: '{"message": "Unable to decode query."}' });
    expect(await get('/containerLogs/default/web/c?tailLines=-1')).toEqual({ code: 422,
      body: '{"message": "Invalid request."}' });
    expect((await get('/containerLogs/default/web/c?sinceSeconds=1&sinceTime=2024-01-01T00:00:00Z')).code).toBe(422);
  });

  it('follows: a line written after the request started arrives, and the stream ends when the container stops', async () => {
    let seen = '';
    let wrote = false;
    const done = get('/containerLogs/default/web/fresh?follow=true', (chunk) => {
      seen += chunk;
      if (!wrote && seen.includes('hi\n')) {
        wrote = true;
        const w = store.open(ref, 'fresh', 0);
        setTimeout(() => {
          w.write('stdout', 'later\n');
          w.close();
          setTimeout(() => statuses.set('fresh', st('fresh', { state: 'exited', exitCode: 0 })), 50);
        }, 50);
      }
    });
    expect(await done).toEqual({ code: 200, body: 'hi\nlater\n' });
  });
});
