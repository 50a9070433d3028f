// kubeconfig rendering and loading, and the real kubectl 1.32 accepting what ensurePki and
// renderKubeconfig produce (Go's TLS verifies the CA and the server's SANs).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildHttpClient } from '../../src/client/http-client.js';
import { loadKubeconfig, renderKubeconfig } from '../../src/client/kubeconfig.js';
import { isKdpError } from '../../src/errors.js';
import { startSecureApi, type SecureApi } from './http-test-server.js';

const KUBECTL = process.env.KDP_KUBECTL_132 ?? '/usr/lib/google-cloud-sdk/bin/kubectl.1.32';
const haveKubectl = existsSync(KUBECTL);
if (!haveKubectl && process.env.CI === 'true') {
  throw new Error(`kubectl 1.32 not found at ${KUBECTL} (set KDP_KUBECTL_132); required in CI`);
}
const run = promisify(execFile);

let dir: string;
let api: SecureApi;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kdp-kcfg-'));
  api = await startSecureApi(dir, ['jane-token,jane,jane,"dev"']);
});
afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text, { mode: 0o600 });
  return p;
}

describe('renderKubeconfig / loadKubeconfig', () => {
  it('renders one cluster, user and current context with base64 CA data', () => {
    const doc = parse(renderKubeconfig({ server: 'https://127.0.0.1:6443', caPem: 'CA',
      token: 't0k', namespace: 'team' }));
    expect(doc).toEqual({
      apiVersion: 'v1', kind: 'Config',
      clusters: [{ name: 'kdp', cluster: { server: 'https://127.0.0.1:6443',
        'certificate-authority-data': Buffer.from('CA').toString('base64') } }],
      users: [{ name: 'kdp-admin', user: { token: 't0k' } }],
      contexts: [{ name: 'kdp', context: { cluster: 'kdp', user: 'kdp-admin',
        namespace: 'team' } }],
      'current-context': 'kdp', preferences: {},
    });
  });

  it('loads back what it renders (token and client certificate)', async () => {
    const p = await writeConfig('rt.yaml', renderKubeconfig({ server: api.url,
      caPem: api.pki.caCertPem, certPem: api.pki.adminCertPem, keyPem: api.pki.adminKeyPem,
      clusterName: 'lab' }));
    expect(loadKubeconfig(p)).toEqual({ server: api.url, context: 'lab', namespace: 'default',
      caPem: api.pki.caCertPem, certPem: api.pki.adminCertPem, keyPem: api.pki.adminKeyPem,
      insecureSkipVerify: false });
  });

  it('resolves certificate files relative to the kubeconfig and reads tokenFile', async () => {
    await writeFile(join(dir, 'ca.pem'), api.pki.caCertPem);
    await writeFile(join(dir, 'tok'), `${api.pki.adminToken}\n`);
    const p = await writeConfig('files.yaml', [
      'apiVersion: v1', 'kind: Config', 'current-context: c',
      `clusters: [{name: k, cluster: {server: "${api.url}", certificate-authority: ca.pem}}]`,
      'users: [{name: u, user: {tokenFile: tok}}]',
      'contexts: [{name: c, context: {cluster: k, user: u}}]', ''].join('\n'));
    const cfg = loadKubeconfig(p);
    expect(cfg.caPem).toBe(api.pki.caCertPem);
    expect(cfg.token).toBe(api.pki.adminToken);
    const c = buildHttpClient(cfg);
    try {
      expect((await c.get({ group: '', version: 'v1', resource: 'namespaces' }, 'default'))
        .metadata.name).toBe('default');
    } finally {
      c.close();
    }
  });

  it('names a missing context as KDP_CONFIG', async () => {
    const p = await writeConfig('bad.yaml', 'apiVersion: v1\nkind: Config\n' +
      'current-context: nope\ncontexts: []\n');
    let err: unknown;
    try { loadKubeconfig(p); } catch (e) { err = e; }
    expect(isKdpError(err, 'KDP_CONFIG')).toBe(true);
    expect((err as Error).message).toContain('no context named "nope"');
  });
});

describe.skipIf(!haveKubectl)('kubectl 1.32 with a rendered kubeconfig', () => {
  const kubectl = (cfg: string, ...args: string[]) => run(KUBECTL, ['--kubeconfig', cfg,
    '--cache-dir', join(dir, 'cache'), ...args], { timeout: 60_000 });

  it('trusts the CA and sends the bearer token (get namespaces)', async () => {
    const cfg = await writeConfig('token.yaml', renderKubeconfig({ server: api.url,
      caPem: api.pki.caCertPem, token: api.pki.adminToken }));
    const { stdout } = await kubectl(cfg, 'get', 'namespaces', '-o', 'name');
    expect(stdout.trim().split('\n')).toContain('namespace/default');
  });

  it('authenticates with the admin client certificate and creates via protobuf', async () => {
    const cfg = await writeConfig('cert.yaml', renderKubeconfig({ server: api.url,
      caPem: api.pki.caCertPem, certPem: api.pki.adminCertPem, keyPem: api.pki.adminKeyPem }));
    const { stdout } = await kubectl(cfg, 'create', 'configmap', 'from-kubectl',
      '--from-literal=a=1');
    expect(stdout.trim()).toBe('configmap/from-kubectl created');
    const can = await kubectl(cfg, 'auth', 'can-i', 'create', 'deployments');
    expect(can.stdout.trim()).toBe('yes');
  });

  it('answers auth can-i for a user without bindings with "no"', async () => {
    const cfg = await writeConfig('jane.yaml', renderKubeconfig({ server: api.url,
      caPem: api.pki.caCertPem, token: 'jane-token' }));
    const out = await kubectl(cfg, 'auth', 'can-i', 'list', 'pods').then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }));
    expect(out).toEqual({ code: 1, stdout: 'no\n' });
  });
});
