// Sidecar containers in netns mode (init containers with restartPolicy Always, KEP-753), real
// processes driven with the real kubectl: they start in spec order, the next init container
// waiting for each one's startup probe; they run beside the app container, are restarted when
// they exit (even under the pod's restartPolicy Never), do not keep a Job from completing, and
// are stopped after the app container, in reverse spec order.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { kubectlFor } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
/** A sidecar that says when it is stopped (SIGTERM) by appending its name to /var/kdp-side-order/f (a hostPath volume). */
const traps = (name: string) => ['sh', '-c', `trap 'echo ${name} >> /var/kdp-side-order/f; exit 0' TERM; echo ${name}-up; `
  + 'while :; do sleep 0.1; done'];

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('sidecar containers (netns)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-side-')));
  const orderDir = mkdtempSync(join(tmpdir(), 'kdp-side-order-'));
  let cluster: RunningCluster;
  const run = kubectlFor(paths.kubeconfig, { minor: 33 });
  const kubectl = (args: string[], minor = 33) => run(args, { minor });
  const pod = (name: string) => cluster.client.get<Pod>(PODS, name);
  const init = (p: Pod, name: string) => p.status?.initContainerStatuses?.find((c) => c.name === name);
  const create = (p: object) => cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', ...p } as Pod);

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns',
      progress: () => {} });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
    rmSync(orderDir, { recursive: true, force: true });
  }, 60_000);

  it('start in order, each waiting for the sidecar before it to start; run beside the app; restarted when they exit',
    async () => {
      await create({ metadata: { name: 'side', namespace: 'default' }, spec: { restartPolicy: 'Never',
        terminationGracePeriodSeconds: 10,
        initContainers: [
          // Started (its startup probe passes) only once it has written /tmp/a-started, 2 s in.
          { name: 'side-a', image: 'busybox', restartPolicy: 'Always',
            command: ['sh', '-c', 'echo a-up; sleep 2; touch /tmp/a-started; exec sleep 3600'],
            startupProbe: { exec: { command: ['cat', '/tmp/a-started'] }, periodSeconds: 2, failureThreshold: 100 } },
          // Fails unless side-a had started before it ran.
          { name: 'setup', image: 'busybox', command: ['sh', '-c', 'cat /tmp/a-started && echo setup-after-a'] },
          // Exits 7 whenever /tmp/c-stop appears.
          { name: 'side-c', image: 'busybox', restartPolicy: 'Always',
            command: ['sh', '-c', 'echo c-up; while [ ! -f /tmp/c-stop ]; do sleep 0.1; done; rm /tmp/c-stop; exit 7'],
            readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 } },
        ],
        containers: [{ name: 'app', image: 'busybox', command: ['sh', '-c', 'echo app-up; exec sleep 3600'] }] } });
      await waitFor(async () => init(await pod('side'), 'side-a')?.state?.running, 30_000, 'side-a running');
      const early = await pod('side');
      expect(init(early, 'side-a')).toMatchObject({ started: false, ready: false });
      expect(init(early, 'setup')?.state?.waiting?.reason).toBe('PodInitializing');
      expect(early.status!.phase).toBe('Pending');
      expect((await kubectl(['get', 'pod', 'side', '--no-headers'])).out.trim().split(/\s+/).slice(1, 3))
        .toEqual(['0/3', 'Init:0/3']);
      await waitFor(async () => (await pod('side')).status?.containerStatuses?.[0]?.ready, 30_000, 'app ready');
      const up = await pod('side');
      expect(up.status!.phase).toBe('Running');
      expect(init(up, 'side-a')).toMatchObject({ started: true, ready: true, state: { running: {} } });
      expect(init(up, 'setup')).toMatchObject({ started: false, ready: true,
        state: { terminated: { exitCode: 0, reason: 'Completed' } } });
      await waitFor(async () => init(await pod('side'), 'side-c')?.ready, 30_000, 'side-c ready');
      expect(init(await pod('side'), 'side-c')).toMatchObject({ started: true, state: { running: {} } });
      expect((await kubectl(['logs', 'side', '-c', 'setup'])).out).toBe('setup-after-a\n');
      expect((await kubectl(['get', 'pod', 'side', '--no-headers'])).out.trim().split(/\s+/).slice(1, 3))
        .toEqual(['3/3', 'Running']);
      expect((await pod('side')).status!.conditions!.find((c) => c.type === 'Ready')?.status).toBe('True');
      // side-c exits 7: restarted although the pod's restartPolicy is Never; the app runs on.
      expect((await kubectl(['exec', 'side', '-c', 'app', '--', 'touch', '/tmp/c-stop'])).code).toBe(0);
      await waitFor(async () => {
        const c = init(await pod('side'), 'side-c');
        return c?.restartCount === 1 && c.state?.running;
      }, 30_000, 'side-c restarted');
      const after = await pod('side');
      expect(init(after, 'side-c')!.lastState?.terminated).toMatchObject({ exitCode: 7, reason: 'Error' });
      expect(after.status!.containerStatuses![0]).toMatchObject({ restartCount: 0, state: { running: {} } });
      expect((await kubectl(['logs', 'side', '-c', 'side-c', '--previous'])).out).toBe('c-up\n');
    }, 90_000);

  it('a sidecar with a postStart hook has started once the hook is done: the next init container waits for it',
    async () => {
      await create({ metadata: { name: 'hooked', namespace: 'default' }, spec: { restartPolicy: 'Never',
        terminationGracePeriodSeconds: 1,
        initContainers: [
          { name: 'side', image: 'busybox', restartPolicy: 'Always', command: ['sleep', '3600'],
            lifecycle: { postStart: { exec: { command: ['sh', '-c', 'sleep 1; echo hooked > /tmp/hook'] } } } },
          { name: 'after', image: 'busybox', command: ['cat', '/tmp/hook'] },
        ],
        containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }] } });
      await waitFor(async () => (await pod('hooked')).status?.containerStatuses?.[0]?.state?.running, 30_000, 'app running');
      expect(init(await pod('hooked'), 'after')!.state?.terminated).toMatchObject({ exitCode: 0 });
      expect((await kubectl(['logs', 'hooked', '-c', 'after'])).out).toBe('hooked\n');
    }, 60_000);

  it('do not keep a Job from completing: stopped once its main container is done', async () => {
    await cluster.client.create({ group: 'batch', version: 'v1', resource: 'jobs', namespace: 'default' },
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'withside', namespace: 'default' },
        spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 10,
          initContainers: [{ name: 'proxy', image: 'busybox', restartPolicy: 'Always',
            command: ['sh', '-c', 'trap "echo proxy-stopped; exit 0" TERM; echo proxy-up; while :; do sleep 0.1; done'] }],
          containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'sleep 1; echo main-done'] }] } } } } as never);
    const w = await kubectl(['wait', '--for=condition=complete', 'job/withside', '--timeout=60s']);
    expect(w).toMatchObject({ code: 0, err: '' });
    const p = (await cluster.client.list<Pod>(PODS)).items.find((x) => x.metadata.labels?.['job-name'] === 'withside')!;
    expect(p.status!.phase).toBe('Succeeded');
    expect(init(p, 'proxy')!.state?.terminated).toMatchObject({ exitCode: 0 });
    expect((await kubectl(['logs', p.metadata.name!, '-c', 'proxy'])).out).toBe('proxy-up\nproxy-stopped\n');
    expect((await kubectl(['logs', p.metadata.name!, '-c', 'main'])).out).toBe('main-done\n');
  }, 90_000);

  it('are stopped after the app container, in reverse spec order, when the pod is deleted', async () => {
    await create({ metadata: { name: 'order', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 30,
      volumes: [{ name: 'order', hostPath: { path: orderDir } }],
      initContainers: ['s1', 's2'].map((name) => ({ name, image: 'busybox', restartPolicy: 'Always', command: traps(name),
        volumeMounts: [{ name: 'order', mountPath: '/var/kdp-side-order' }] })),
      // The app takes a moment to stop: the sidecars wait for it.
      containers: [{ name: 'app', image: 'busybox', volumeMounts: [{ name: 'order', mountPath: '/var/kdp-side-order' }],
        command: ['sh', '-c', 'trap \'sleep 0.5; echo app >> /var/kdp-side-order/f; exit 0\' TERM; while :; do sleep 0.1; done'] }] } });
    await waitFor(async () => (await pod('order')).status?.containerStatuses?.[0]?.state?.running, 30_000, 'app running');
    expect((await kubectl(['delete', 'pod', 'order', '--wait=true', '--timeout=60s'])).code).toBe(0);
    expect(readFileSync(join(orderDir, 'f'), 'utf8')).toBe('app\ns2\ns1\n');
  }, 90_000);
});
