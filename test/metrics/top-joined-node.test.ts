// A `kdp node` process that joined a kdp up cluster: its kubelet serves /metrics/resource (the
// virtual model) and the cluster's collector scrapes it through the API server's node proxy, so
// `kubectl top nodes` and `kubectl top pods` include it beside the in-process nodes.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kubectlFor, kubectlMissing } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const KDP = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
const MINOR = kubectlMissing(33) ? 27 : 33;

describe.runIf(!kubectlMissing(MINOR))('kubectl top with a joined kdp node process', () => {
  const root = mkdtempSync(join(tmpdir(), 'kdp-topjoin-'));
  const paths = dataDirPaths(root);
  const kubectl = kubectlFor(paths.kubeconfig, { minor: MINOR });
  let cluster: RunningCluster | undefined;
  let node: ChildProcess | undefined;

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 10, progress: () => {},
      dns: false });
    node = spawn(process.execPath, [KDP, 'node', '--name', 'w1', '--node-ip', '172.18.0.9', '--time-scale', '10',
      '--data-dir', root], { stdio: 'ignore' });
    await waitFor(async () => /\bReady\b/.test((await kubectl(['get', 'node', 'w1', '--no-headers'])).out),
      60_000, 'node w1 Ready');
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'remote' }, spec: { nodeName: 'w1',
      containers: [{ name: 'c', image: 'kdp/echo', resources: { requests: { cpu: '30m', memory: '8Mi' } } }] } };
    expect((await kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) })).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    node?.kill('SIGTERM');
    await cluster?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('top nodes and top pods include the joined node and its pod', async () => {
    await waitFor(async () => /\nw1\s+\d+m\s+\d+%\s+\d+Mi/.test((await kubectl(['top', 'nodes'])).out), 60_000,
      'w1 in top nodes');
    await waitFor(async () => /\nremote\s+30m\s+8Mi/.test((await kubectl(['top', 'pods'])).out), 60_000,
      'the remote pod in top pods');
    const raw = await kubectl(['get', '--raw', '/api/v1/nodes/w1/proxy/metrics']);
    expect(raw.out).toMatch(/^kubelet_running_pods 1$/m);
  }, 120_000);
});
