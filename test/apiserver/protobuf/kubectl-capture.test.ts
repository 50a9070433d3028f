// Decodes bodies the real kubectl 1.32 sends: a throwaway node:http server on 127.0.0.1 records
// each POST, answers with the decoded object as JSON, and kubectl's own output confirms it.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeKubernetesProtobuf, isProtobufContentType,
} from '../../../src/apiserver/protobuf/index.js';
import type { KubeObject } from '../../../src/client/types.js';

const KUBECTL = process.env.KDP_KUBECTL_132 ?? '/usr/lib/google-cloud-sdk/bin/kubectl.1.32';
const haveKubectl = existsSync(KUBECTL);
if (!haveKubectl && process.env.CI === 'true') {
  throw new Error(`kubectl 1.32 not found at ${KUBECTL} (set KDP_KUBECTL_132); required in CI`);
}
const run = promisify(execFile);

interface Seen { path: string; contentType: string; object: KubeObject }
const seen: Seen[] = [];
let server: Server;
let dir: string;

beforeAll(async () => {
  if (!haveKubectl) return;
  dir = await mkdtemp(join(tmpdir(), 'kdp-pbcap-'));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const ct = req.headers['content-type'] ?? '';
      if (req.method !== 'POST' || !isProtobufContentType(ct)) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure',
          reason: 'NotFound', code: 404, message: 'not found' }));
        return;
      }
      const object = decodeKubernetesProtobuf(Buffer.concat(chunks));
      seen.push({ path: (req.url ?? '').split('?')[0]!, contentType: ct, object });
      const reply = object.kind === 'SelfSubjectAccessReview'
        ? { ...object, status: { allowed: true } } : object;
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await writeFile(join(dir, 'kubeconfig'), [
    'apiVersion: v1', 'kind: Config',
    `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]`,
    'users: [{name: u, user: {}}]',
    'contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]',
    'current-context: c', ''].join('\n'));
});

afterAll(async () => {
  if (!haveKubectl) return;
  server.close();
  await rm(dir, { recursive: true, force: true });
});

async function kubectl(...args: string[]): Promise<{ out: string; object: KubeObject }> {
  const before = seen.length;
  const { stdout } = await run(KUBECTL, ['--kubeconfig', join(dir, 'kubeconfig'),
    '--cache-dir', join(dir, 'cache'), ...args], { timeout: 30_000 });
  expect(seen.length).toBe(before + 1);
  return { out: stdout.trim(), object: seen[seen.length - 1]!.object };
}

describe.skipIf(!haveKubectl)('bodies captured from kubectl 1.32', () => {
  it('create namespace x --dry-run=server', async () => {
    const { out, object } = await kubectl('create', 'namespace', 'x', '--dry-run=server');
    expect(out).toBe('namespace/x created (server dry run)');
    expect(object).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } });
  });

  it('create deployment with replicas 0 and a port', async () => {
    const { out, object } = await kubectl('create', 'deployment', 'web', '--image=nginx:1.27',
      '--replicas=0', '--port=80', '--dry-run=server');
    expect(out).toBe('deployment.apps/web created (server dry run)');
    expect(object).toEqual({
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: { replicas: 0, selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27',
            ports: [{ containerPort: 80 }] }] } } },
    });
  });

  it('create service nodeport with an explicit node port', async () => {
    const { object } = await kubectl('create', 'service', 'nodeport', 'np', '--tcp=80:8080',
      '--node-port=30080', '--dry-run=server');
    expect(object.spec).toEqual({ type: 'NodePort', selector: { app: 'np' },
      ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080,
        nodePort: 30080 }] });
  });

  it('create service clusterip headless with a named target port', async () => {
    const { object } = await kubectl('create', 'service', 'clusterip', 'hl', '--clusterip=None',
      '--tcp=5678:http', '--dry-run=server');
    expect(object.spec).toEqual({ type: 'ClusterIP', clusterIP: 'None', selector: { app: 'hl' },
      ports: [{ name: '5678-http', protocol: 'TCP', port: 5678, targetPort: 'http' }] });
  });

  it('create configmap and secret generic from literals', async () => {
    const cm = await kubectl('create', 'configmap', 'cm', '--from-literal=a=1',
      '--from-literal=b=', '--dry-run=server');
    expect(cm.object.data).toEqual({ a: '1', b: '' });
    const s = await kubectl('create', 'secret', 'generic', 's', '--from-literal=user=admin',
      '--dry-run=server');
    expect(s.object).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' },
      data: { user: 'YWRtaW4=' } });
  });

  it('create clusterrolebinding and auth can-i', async () => {
    const crb = await kubectl('create', 'clusterrolebinding', 'crb', '--clusterrole=view',
      '--group=dev', '--dry-run=server');
    expect(crb.object).toMatchObject({ roleRef: { kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'Group', name: 'dev', apiGroup: 'rbac.authorization.k8s.io' }] });
    const can = await kubectl('auth', 'can-i', 'get', '/healthz');
    expect(can.out).toBe('yes');
    expect(can.object.spec).toEqual({ nonResourceAttributes: { path: '/healthz', verb: 'get' } });
  });
});
