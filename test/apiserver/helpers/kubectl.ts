// Runs the real kubectl against a kdp API server started on a random 127.0.0.1 port over HTTPS
// with the cluster CA and the admin token; each harness has its own kubeconfig and cache dir.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../../../src/apiserver/start.js';
import type { RunningApiServer } from '../../../src/apiserver/start.js';

export const KUBECTL_DIR = '/usr/lib/google-cloud-sdk/bin';

export function kubectlPath(minor: number): string {
  return join(KUBECTL_DIR, `kubectl.1.${minor}`);
}

/** Whether to skip (binary missing, not CI); under CI=true a missing binary is a failure. */
export function kubectlMissing(minor: number): boolean {
  const missing = !existsSync(kubectlPath(minor));
  if (missing && process.env.CI === 'true') {
    throw new Error(`kubectl 1.${minor} is required under CI but ${kubectlPath(minor)} is missing`);
  }
  return missing;
}

export interface KubectlResult { code: number; stdout: string; stderr: string }

/**
 * stderr without the one line client-go 1.29–1.32 log for a race of their own: their WebSocket
 * read loop starts before the streams exist, so the empty "connection ready" message that the
 * server sends first on the lowest writable channel (upstream's kubelet and API server do too)
 * can arrive unclaimed; it is logged and discarded, no data lost (1.33 drains it silently).
 */
export function withoutClientStreamRace(stderr: string): string {
  return stderr.replace(/^E\d{4} [\d:.]+ +\d+ websocket\.go:\d+\] Unknown stream id \d+, discarding message\n/gm, '');
}

/** The real kubectl against a cluster's kubeconfig (a `kdp up` in tests): exit code (timeouts and
 *  signals as 1), stdout and stderr, never a rejection; `input` goes to its stdin. */
export function kubectlFor(kubeconfig: string, defaults: { minor?: number; timeoutMs?: number } = {}) {
  return (args: string[], o: { minor?: number; timeoutMs?: number; input?: string } = {}) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const p = execFile(kubectlPath(o.minor ?? defaults.minor ?? 32), ['--kubeconfig', kubeconfig, ...args],
        { timeout: o.timeoutMs ?? defaults.timeoutMs ?? 60_000 },
        (e, out, err) => resolve({
          code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out, err: withoutClientStreamRace(err),
        }));
      if (o.input !== undefined) p.stdin!.end(o.input);
    });
}

export interface KubectlHarness {
  readonly server: RunningApiServer;
  readonly dir: string;
  kubectl(args: string[], opts?: { minor?: number; timeoutMs?: number }): Promise<KubectlResult>;
  /** Writes a file in the harness directory and returns its path. */
  file(name: string, text: string): Promise<string>;
  close(): Promise<void>;
}

export async function startKubectlHarness(
  opts: Omit<Partial<Parameters<typeof startApiServer>[0]>, 'dataDir' | 'port'> = {},
): Promise<KubectlHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'kdp-kubectl-'));
  let server: RunningApiServer;
  try {
    server = await startApiServer({ ...opts, dataDir: join(dir, 'data'), port: 0 });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const ca = Buffer.from(server.pki.caCertPem).toString('base64');
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: kdp', '  cluster:', `    server: "${server.url}"`,
    `    certificate-authority-data: ${ca}`,
    'users:', '- name: admin', '  user:', `    token: ${server.pki.adminToken}`,
    'contexts:', '- name: kdp', '  context: {cluster: kdp, user: admin, namespace: default}',
    'current-context: kdp', ''].join('\n'));
  return {
    server, dir,
    kubectl(args, opts = {}) {
      const bin = kubectlPath(opts.minor ?? 32);
      const cache = join(dir, `cache-${opts.minor ?? 32}`);
      const full = ['--kubeconfig', kubeconfig, '--cache-dir', cache, ...args];
      return new Promise((resolve) => {
        const env = { PATH: process.env.PATH ?? '', HOME: dir };
        execFile(bin, full, { timeout: opts.timeoutMs ?? 30_000, env }, (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr: withoutClientStreamRace(stderr) });
        });
      });
    },
    async file(name, text) {
      const p = join(dir, name);
      await writeFile(p, text);
      return p;
    },
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
