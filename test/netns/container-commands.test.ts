// Containers that run their spec in netns mode (issue 13), driven with the real kubectl: a Job's
// command runs to completion and its output is the pod's log, exit codes become the container's
// terminated state, env (values, downward fields, ConfigMap keys) reaches the process.

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { kubectlPath } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const CMS = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' } as const;

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('containers run their spec (netns)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-run-')));
  let cluster: RunningCluster;
  const kubectl = (args: string[], input?: string, minor = 32) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const p = execFile(kubectlPath(minor), ['--kubeconfig', paths.kubeconfig, ...args], { timeout: 90_000 },
        (e, out, err) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out, err }));
      if (input !== undefined) p.stdin!.end(input);
    });
  const terminated = async (name: string) => {
    let st: NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number] | undefined;
    await waitFor(async () => {
      st = (await cluster.client.get<Pod>(PODS, name)).status?.containerStatuses?.[0];
      return !!st?.state?.terminated;
    }, 60_000, `${name} terminated`);
    return st!.state!.terminated!;
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns',
      progress: () => {} });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 30_000);

  it('a Job running sh -c completes and its log is the command\'s output', async () => {
    expect((await kubectl(['create', 'job', 'hi', '--image=busybox', '--', 'sh', '-c', 'echo hi; echo to-err >&2; exit 0'])).code)
      .toBe(0);
    const w = await kubectl(['wait', '--for=condition=complete', 'job/hi', '--timeout=60s']);
    expect(w.err).toBe('');
    expect(w.code).toBe(0);
    const logs = await kubectl(['logs', 'job/hi']);
    expect(logs.out).toBe('hi\nto-err\n');
  }, 90_000);

  it('a non-zero exit is terminated Error with its exit code; 0 is Completed', async () => {
    for (const [name, script] of [['exit3', 'printf partial; exit 3'], ['exit0', 'true']] as const) {
      await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'alpine', command: ['sh', '-c', script] }] } } as Pod);
    }
    expect(await terminated('exit3')).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(await terminated('exit0')).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect((await kubectl(['logs', 'exit3'])).out).toBe('partial\n');
    await waitFor(async () => (await cluster.client.get<Pod>(PODS, 'exit3')).status?.phase === 'Failed', 30_000, 'Failed');
  }, 90_000);

  it('env: values with $(VAR), downward fields, ConfigMap keys; args expanded; workingDir', async () => {
    await cluster.client.create(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'default' },
      data: { COLOR: 'blue' } } as never);
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'envs', namespace: 'default' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', workingDir: '/tmp',
        command: ['sh', '-c'],
        args: ['echo "$GREETING|$MY_NAME|$MY_NS|$MY_IP|$MY_NODE|$COLOR|$(GREETING)|$(pwd)"'],
        env: [
          { name: 'MY_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'GREETING', value: 'hello-$(MY_NAME)' },
          { name: 'MY_NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'MY_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'MY_NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'COLOR' } } },
        ] }] } } as Pod);
    expect(await terminated('envs')).toMatchObject({ exitCode: 0 });
    const ip = (await cluster.client.get<Pod>(PODS, 'envs')).status!.podIP!;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect((await kubectl(['logs', 'envs'])).out)
      .toBe(`hello-envs|envs|default|${ip}|n1|blue|hello-envs|/tmp\n`);
  }, 90_000);
});
