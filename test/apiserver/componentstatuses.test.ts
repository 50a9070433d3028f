// `kubectl get componentstatuses` (cs) as upstream's deprecated endpoint: not stored, probed on
// each call; a bare API server probes the scheduler's and controller manager's secure ports
// (nothing listening: Unhealthy with the dial error), kdp up reports its in-process components.

import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { issueCa, issueLeaf } from '../../src/apiserver/pki/index.js';
import { probeHealthz } from '../../src/apiserver/rest/component-status.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { kubectlMissing, kubectlPath, startKubectlHarness } from './helpers/kubectl.js';

const run = promisify(execFile);

describe('componentstatuses', () => {
  let cluster: RunningCluster | undefined;
  afterAll(async () => { await cluster?.close(); });

  it('a bare API server: Unhealthy with upstream\'s dial error where nothing listens', async () => {
    const h = await startKubectlHarness({ componentStatuses: async () => [
      await probeHealthz('scheduler', 'https://127.0.0.1:1/healthz'),
      { name: 'controller-manager', healthy: true, message: 'ok' }] });
    try {
      const r = await h.kubectl(['get', 'cs'], { minor: 33 });
      expect(r.stdout).toMatch(/^NAME\s+STATUS\s+MESSAGE\s+ERROR\n/);
      expect(r.stdout).toMatch(/\nscheduler\s+Unhealthy\s+Get "https:\/\/127\.0\.0\.1:1\/healthz": dial tcp 127\.0\.0\.1:1: connect: connection refused\s*\n/);
      expect(r.stdout).toMatch(/\ncontroller-manager\s+Healthy\s+ok\s*\n/);
      const one = JSON.parse((await h.kubectl(['get', 'componentstatus', 'controller-manager', '-o', 'json'], { minor: 33 })).stdout);
      expect(one).toEqual({ kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name: 'controller-manager' },
        conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] });
      const missing = await h.kubectl(['get', 'cs', 'etcd-9'], { minor: 33 });
      expect(missing.stderr).toContain('componentstatuses "etcd-9" not found');
    } finally {
      await h.close();
    }
  });

  it('a healthz that answers ok is Healthy', async () => {
    const ca = await issueCa('cs-test');
    const leaf = await issueLeaf(ca, { commonName: 'x', usage: 'server', sans: ['IP:127.0.0.1'] });
    const srv = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (_q, s) => s.end('ok'));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    expect(await probeHealthz('scheduler', `https://127.0.0.1:${port}/healthz`))
      .toEqual({ name: 'scheduler', healthy: true, message: 'ok' });
    srv.close();
  });

  it.skipIf(kubectlMissing(32))('kdp up: its scheduler and controller manager are Healthy', async () => {
    const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-cs-')));
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 20,
      dataPlane: 'virtual', dns: false, progress: () => undefined });
    const r = await run(kubectlPath(32), ['--kubeconfig', paths.kubeconfig, 'get', 'cs', '--no-headers']);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => l.split(/\s+/).slice(0, 3).join(' ')))
      .toEqual(['scheduler Healthy ok', 'controller-manager Healthy ok']);
  });
});
