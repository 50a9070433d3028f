// pods/proxy and services/proxy with the real kubectl: where the request goes (upstream's
// ResourceLocation rules), what reaches the backend, and upstream's errors.

import { createServer, type Server } from 'node:http';
import { get as httpsGet } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendDialer } from '../../src/apiserver/proxy/backend-dialer.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from './helpers/kubectl.js';

const MINOR = 32;

describe.skipIf(kubectlMissing(MINOR))('proxy subresources (kubectl get --raw)', () => {
  let h: KubectlHarness;
  let backend: Server;
  const dials: Array<{ node?: string; ip: string; port: number }> = [];
  let refuse = false;
  // Every pod address is this one HTTP server; the dialer records where kdp meant to go.
  const dialer: BackendDialer = {
    dial: (t) => new Promise<Duplex>((resolve, reject) => {
      dials.push(t);
      if (refuse) { reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })); return; }
      const s = connect((backend.address() as AddressInfo).port, '127.0.0.1');
      s.once('connect', () => resolve(s));
      s.once('error', reject);
    }),
  };
  const raw = async (path: string, as?: string) => h.kubectl(['get', '--raw', path, ...(as ? ['--as', as] : [])], { minor: MINOR });

  beforeAll(async () => {
    backend = createServer((req, res) => {
      res.setHeader('x-backend', 'yes');
      res.end(JSON.stringify({ method: req.method, url: req.url, host: req.headers.host,
        authorization: req.headers.authorization ?? null, forwardedFor: req.headers['x-forwarded-for'] ?? null }));
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    h = await startKubectlHarness({ backendDialer: dialer, authorizationMode: 'RBAC' });
    const apply = await h.kubectl(['apply', '-f', await h.file('objs.yaml', `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: kdp/echo, ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.44
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- {addresses: [10.244.1.7], conditions: {ready: true}, nodeName: n2}
- {addresses: [10.244.2.9], conditions: {ready: false}, nodeName: n3}
---
apiVersion: v1
kind: Service
metadata: {name: empty, namespace: default}
spec: {clusterIP: 10.96.0.45, ports: [{name: http, port: 80}]}
`)], { minor: MINOR });
    expect(apply.stderr).toBe('');
    const st = await h.kubectl(['patch', 'pod', 'web', '--subresource=status', '--type=merge', '-p',
      '{"status":{"podIP":"10.244.0.5","podIPs":[{"ip":"10.244.0.5"}]}}'], { minor: MINOR });
    expect(st.stderr).toBe('');
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    backend?.close();
  });

  it('pods/NAME:PORT/proxy/PATH goes to the pod IP on its node, path and query kept, credentials not', async () => {
    dials.length = 0;
    const r = await raw('/api/v1/namespaces/default/pods/web:8080/proxy/hello/there?x=1');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ method: 'GET', url: '/hello/there?x=1', host: '10.244.0.5:8080',
      authorization: null, forwardedFor: '127.0.0.1' });
    expect(dials).toEqual([{ node: 'n1', ip: '10.244.0.5', port: 8080 }]);
  });

  it('a pod without a port takes its first container port; /proxy without a slash is redirected to /proxy/', async () => {
    dials.length = 0;
    const r = await raw('/api/v1/namespaces/default/pods/web/proxy/');
    expect(JSON.parse(r.stdout).url).toBe('/');
    expect(dials).toEqual([{ node: 'n1', ip: '10.244.0.5', port: 8080 }]);
    const res = await new Promise<{ status?: number; location?: string }>((resolve, reject) => {
      const u = new URL(`${h.server.url}/api/v1/namespaces/default/pods/web/proxy?a=b`);
      httpsGet({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, ca: h.server.pki.caCertPem,
        headers: { authorization: `Bearer ${h.server.pki.adminToken}` } }, (r) => {
        r.resume();
        resolve({ status: r.statusCode, location: r.headers.location });
      }).once('error', reject);
    });
    expect(res).toEqual({ status: 301, location: '/api/v1/namespaces/default/pods/web/proxy/?a=b' });
  });

  it('services/NAME:PORTNAME/proxy/ and services/NAME:PORTNUMBER go to a ready endpoint', async () => {
    dials.length = 0;
    expect(JSON.parse((await raw('/api/v1/namespaces/default/services/web:http/proxy/x')).stdout).url).toBe('/x');
    expect(JSON.parse((await raw('/api/v1/namespaces/default/services/web:80/proxy/y')).stdout).url).toBe('/y');
    expect(JSON.parse((await raw('/api/v1/namespaces/default/services/http:web:http/proxy/')).stdout).url).toBe('/');
    expect(dials).toEqual(Array(3).fill({ node: 'n2', ip: '10.244.1.7', port: 8080 }));
  });

  it('upstream\'s errors: no endpoints, no such port, unknown pod, a refused dial, bad ids', async () => {
    expect((await raw('/api/v1/namespaces/default/services/empty:http/proxy/')).stderr)
      .toContain('no endpoints available for service "empty:http"');
    expect((await raw('/api/v1/namespaces/default/services/web:81/proxy/')).stderr)
      .toContain('no service port 81 found for service "web"');
    expect((await raw('/api/v1/namespaces/default/pods/nope:80/proxy/')).stderr)
      .toContain('pods "nope" not found');
    expect((await raw('/api/v1/namespaces/default/pods/ftp:web:80/proxy/')).stderr)
      .toContain('invalid pod request "ftp:web:80"');
    refuse = true;
    try {
      const r = await raw('/api/v1/namespaces/default/pods/web:9999/proxy/');
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('error trying to reach service: dial tcp 10.244.0.5:9999: connect: connection refused');
    } finally {
      refuse = false;
    }
  });

  it('the caller needs the proxy subresource: a user without it gets 403', async () => {
    const r = await raw('/api/v1/namespaces/default/pods/web:8080/proxy/', 'jane');
    expect(r.stderr).toContain('pods "web" is forbidden: User "jane" cannot get resource "pods/proxy" in API group "" in the namespace "default"');
  });
});

describe.skipIf(kubectlMissing(MINOR))('proxy subresources on a virtual cluster', () => {
  it('say that virtual nodes run no processes', async () => {
    const h = await startKubectlHarness();
    try {
      await h.kubectl(['run', 'p', '--image=kdp/echo', '--port=80'], { minor: MINOR });
      await h.kubectl(['patch', 'pod', 'p', '--subresource=status', '--type=merge', '-p',
        '{"status":{"podIP":"10.244.0.9"}}'], { minor: MINOR });
      const r = await h.kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/p/proxy/'], { minor: MINOR });
      expect(r.stderr).toContain('error trying to reach service: dial tcp 10.244.0.9:80: virtual nodes run no processes');
    } finally {
      await h.close();
    }
  });
});
