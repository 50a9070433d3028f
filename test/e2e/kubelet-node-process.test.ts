// A `kdp node` process against a `kdp apiserver` process serves the kubelet API as kdp up's nodes
// do: its certificate from the cluster CA, its port in the Node's daemonEndpoints; the API
// server reaches it for pods/log and nodes/proxy, exec answers the virtual Status, and a request
// without a client certificate is 401.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlFor, kubectlMissing } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const KDP = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
const MINOR = kubectlMissing(33) ? 27 : 33;

describe.runIf(!kubectlMissing(MINOR))('the kubelet API of a kdp node process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-nodeproc-'));
  const kubeconfig = join(dataDir, 'kubeconfig');
  const kubectl = kubectlFor(kubeconfig, { minor: MINOR });
  const procs: ChildProcess[] = [];
  const start = (...args: string[]) => {
    const p = spawn(process.execPath, [KDP, ...args, '--data-dir', dataDir], { stdio: 'ignore' });
    procs.push(p);
  };

  beforeAll(async () => {
    start('apiserver', '--port', '0');
    await waitFor(() => existsSync(kubeconfig), 30_000, 'the API server kubeconfig');
    start('controller-manager', '--time-scale', '10');
    start('node', '--name', 'w1', '--node-ip', '172.18.0.9', '--time-scale', '10');
    await waitFor(async () => /\bReady\b/.test((await kubectl(['get', 'node', 'w1', '--no-headers'])).out),
      60_000, 'node w1 Ready');
    // No scheduler: the pod names its node.
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' },
      spec: { nodeName: 'w1', containers: [{ name: 'c', image: 'kdp/echo' }] } };
    expect((await kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) })).code).toBe(0);
    await waitFor(async () => (await kubectl(['get', 'pod', 'p', '-o', 'jsonpath={.status.phase}'])).out === 'Running',
      60_000, 'pod p Running');
  }, 120_000);

  afterAll(async () => {
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
  });

  it('serves pods/log and nodes/proxy through the API server', async () => {
    const logs = await kubectl(['logs', 'p', '--timestamps']);
    expect(logs.code).toBe(0);
    expect(logs.out).toMatch(/^\S+Z \[kdp-virtual\] started container c \(image kdp\/echo\)\n/);
    const raw = await kubectl(['get', '--raw', '/api/v1/nodes/w1/proxy/pods']);
    expect(raw.code).toBe(0);
    expect(JSON.parse(raw.out).items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['p']);
  });

  it('answers exec with the virtual Status, and a request without a certificate 401', async () => {
    const r = await kubectl(['exec', 'p', '--', 'true']);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('virtual nodes run no processes');
    const port = Number((await kubectl(['get', 'node', 'w1', '-o',
      'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}'])).out);
    expect(port).toBeGreaterThan(0);
    const code = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/containerLogs/default/p/c', rejectUnauthorized: false },
        (res) => { res.resume(); resolve(res.statusCode ?? 0); }).on('error', reject).end();
    });
    expect(code).toBe(401);
  });
});
