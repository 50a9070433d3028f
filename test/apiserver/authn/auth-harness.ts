// An API server as `kdp apiserver` starts it (HTTPS, the production request path, default
// authorization and admission), with identities as client certificates issued by its CA: each
// can send raw HTTPS requests or run the real kubectl with its own kubeconfig.

import { execFile } from 'node:child_process';
import { request } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { caOf, issueClientCertificate } from '../../../src/apiserver/pki/index.js';
import { startApiServer, type RunningApiServer } from '../../../src/apiserver/start.js';
import { renderKubeconfig } from '../../../src/client/kubeconfig.js';
import { kubectlPath } from '../helpers/kubectl.js';

export interface Identity {
  readonly name: string;
  readonly certPem: string;
  readonly keyPem: string;
  readonly kubeconfig: string;
}

export interface HttpsResult { status: number; body: any; text: string }

export interface AuthHarness {
  readonly server: RunningApiServer;
  readonly admin: Identity;
  /** A client certificate with CN = user and O = groups, and its kubeconfig. */
  identity(user: string, groups?: readonly string[]): Promise<Identity>;
  req(who: Identity, method: string, path: string, body?: unknown,
    headers?: Record<string, string | string[]>): Promise<HttpsResult>;
  kubectl(who: Identity, args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

export async function startAuthHarness(): Promise<AuthHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'kdp-auth-'));
  const server = await startApiServer({ dataDir: join(dir, 'data'), port: 0 });
  const ca = caOf(server.pki);
  let n = 0;
  const identity = async (user: string, groups: readonly string[] = []): Promise<Identity> => {
    const pair = await issueClientCertificate(ca, { commonName: user, organizations: groups });
    const kubeconfig = join(dir, `kubeconfig-${n++}`);
    await writeFile(kubeconfig, renderKubeconfig({ server: server.url, caPem: ca.certPem,
      certPem: pair.certPem, keyPem: pair.keyPem }));
    return { name: user, ...pair, kubeconfig };
  };
  const admin = await identity('kubernetes-admin', ['system:masters']);
  const url = new URL(server.url);
  const req: AuthHarness['req'] = (who, method, path, body, headers = {}) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const r = request({
        host: url.hostname, port: url.port, method, path, ca: ca.certPem,
        cert: who.certPem, key: who.keyPem,
        headers: { accept: 'application/json', ...headers,
          ...(payload !== undefined ? { 'content-type': headers['content-type'] ??
            'application/json' } : {}) },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try { parsed = JSON.parse(text); } catch { parsed = undefined; }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      });
      r.on('error', reject);
      r.end(payload);
    });
  const kubectl: AuthHarness['kubectl'] = (who, args) => new Promise((resolve) => {
    const full = ['--kubeconfig', who.kubeconfig, '--cache-dir', join(dir, 'cache'), ...args];
    execFile(kubectlPath(32), full, { timeout: 30_000, env: { PATH: process.env.PATH ?? '',
      HOME: dir } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
  return {
    server, admin, identity, req, kubectl,
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
