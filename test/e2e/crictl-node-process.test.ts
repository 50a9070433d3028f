// `kdp crictl` against a node agent run as its own process (`kdp node --name n1`): the process
// serves the node's runtime endpoint in the data dir it was given, and `kdp crictl --node n1`
// lists the pod bound to it with the containerID the API server shows.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { buildHttpClient } from '../../src/client/http-client.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import { runtimeEndpointPath } from '../../src/kubelet/runtime-endpoint/listen.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const KDP = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

describe('kdp crictl against a `kdp node` process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-crinode-'));
  const kubeconfig = join(dataDir, 'kubeconfig');
  const procs: ChildProcess[] = [];
  const start = (...args: string[]) => {
    procs.push(spawn(process.execPath, [KDP, ...args, '--data-dir', dataDir], { stdio: 'ignore' }));
  };

  beforeAll(async () => {
    start('apiserver', '--port', '0');
    await waitFor(() => existsSync(kubeconfig), 30_000, 'the API server kubeconfig');
    start('controller-manager', '--time-scale', '10');
    start('node', '--name', 'n1', '--node-ip', '172.18.0.2', '--time-scale', '10');
    await waitFor(() => existsSync(runtimeEndpointPath(dataDir, 'n1')), 60_000, 'n1\'s runtime endpoint');
  }, 90_000);
  afterAll(async () => {
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
  });

  it('lists the node\'s pod and container under the IDs the API shows', async () => {
    expect(statSync(runtimeEndpointPath(dataDir, 'n1')).mode & 0o777).toBe(0o600);
    const client = buildHttpClient(loadKubeconfig(kubeconfig));
    await client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'solo', namespace: 'default' },
      spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'kdp/echo' }] } } as Pod);
    const pod = await waitFor(async () => {
      const p = await client.get<Pod>(PODS, 'solo');
      return p.status?.containerStatuses?.[0]?.containerID && p.status.containerStatuses[0].state?.running ? p : undefined;
    }, 60_000, 'solo running');
    const id = pod.status!.containerStatuses![0]!.containerID!.replace(/^kdp:\/\//, '');
    const ps = await kdp('crictl', '--data-dir', dataDir, '--node', 'n1', 'ps', '-q');
    expect(ps.err).toBe('');
    expect(ps.out.trim().split('\n')).toContain(id);
    const pods = await kdp('crictl', '--data-dir', dataDir, '--node', 'n1', 'pods', '-o', 'json');
    expect(JSON.parse(pods.out).items.map((p: { metadata: { uid: string } }) => p.metadata.uid))
      .toContain(pod.metadata.uid);
  }, 90_000);
});
