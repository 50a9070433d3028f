// Container lifecycle in netns mode (issue 13), driven with the real kubectl: init containers run
// in order to completion before the app containers (Init:N/M, Init:Error, Init:CrashLoopBackOff),
// liveness probes (exec in the container's namespaces, tcpSocket) kill and restart a container and
// `logs --previous` shows the run before, exec readiness probes set the ready flag, and a preStop
// exec hook runs before SIGTERM on deletion.

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
import { kubectlFor } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const EVENTS = { group: '', version: 'v1', resource: 'events', namespace: 'default' } as const;
type Ev = { reason?: string; message?: string; involvedObject?: { name?: string; fieldPath?: string } };

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('container lifecycle (netns)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-life-')));
  let cluster: RunningCluster;
  const run = kubectlFor(paths.kubeconfig, { minor: 33 });
  const kubectl = (args: string[], minor = 33) => run(args, { minor });
  const pod = (name: string) => cluster.client.get<Pod>(PODS, name);
  const podStatusColumn = async (name: string) =>
    (await kubectl(['get', 'pod', name, '--no-headers'])).out.trim().split(/\s+/)[2];
  const events = async (name: string) =>
    (await cluster.client.list<Ev & Pod>(EVENTS)).items.filter((e) => e.involvedObject?.name === name) as Ev[];
  const create = (p: object) => cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', ...p } as Pod);

  beforeAll(async () => {
    // timeScale 10: back-off 1 s, probe periods and grace periods a tenth of their seconds.
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns',
      progress: () => {} });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 30_000);

  it('init containers run in order to completion before the app container, sharing an emptyDir', async () => {
    await create({ metadata: { name: 'inits', namespace: 'default' }, spec: {
      volumes: [{ name: 'data', emptyDir: {} }],
      initContainers: [
        { name: 'first', image: 'busybox', command: ['sh', '-c', 'echo init-one; echo one > /var/kdp-life/f'],
          volumeMounts: [{ name: 'data', mountPath: '/var/kdp-life' }] },
        { name: 'second', image: 'busybox', command: ['sh', '-c', 'sleep 8; echo two >> /var/kdp-life/f'],
          volumeMounts: [{ name: 'data', mountPath: '/var/kdp-life' }] },
      ],
      containers: [{ name: 'app', image: 'busybox', command: ['sh', '-c', 'cat /var/kdp-life/f; exec sleep 3600'],
        volumeMounts: [{ name: 'data', mountPath: '/var/kdp-life' }] }] } });
    // While the second runs: Pending, Init:1/2, the first Completed, the app PodInitializing.
    await waitFor(async () => (await pod('inits')).status?.initContainerStatuses?.[1]?.state?.running, 30_000,
      'second init running');
    const mid = (await pod('inits')).status!;
    expect(mid.phase).toBe('Pending');
    expect(mid.initContainerStatuses![0]).toMatchObject({ name: 'first', ready: true,
      state: { terminated: { exitCode: 0, reason: 'Completed' } } });
    expect(mid.containerStatuses![0]!.state).toEqual({ waiting: { reason: 'PodInitializing' } });
    expect(mid.conditions!.find((c) => c.type === 'Initialized')).toMatchObject({ status: 'False',
      reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [second]' });
    expect(await podStatusColumn('inits')).toBe('Init:1/2');
    await waitFor(async () => (await pod('inits')).status?.containerStatuses?.[0]?.ready, 30_000, 'app ready');
    const done = (await pod('inits')).status!;
    expect(done.phase).toBe('Running');
    expect(done.conditions!.find((c) => c.type === 'Initialized')?.status).toBe('True');
    expect((await kubectl(['logs', 'inits', '-c', 'app'])).out).toBe('one\ntwo\n');
    expect((await kubectl(['logs', 'inits', '-c', 'first'])).out).toBe('init-one\n');
  }, 60_000);

  it('a failing init container: Init:Error and Failed under Never; Init:CrashLoopBackOff under Always', async () => {
    for (const [name, restartPolicy] of [['initnever', 'Never'], ['initloop', 'Always']] as const) {
      await create({ metadata: { name, namespace: 'default' }, spec: { restartPolicy,
        initContainers: [{ name: 'fail', image: 'busybox', command: ['sh', '-c', 'echo no; exit 2'] }],
        containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }] } });
    }
    await waitFor(async () => (await pod('initnever')).status?.phase === 'Failed', 30_000, 'initnever Failed');
    const never = (await pod('initnever')).status!;
    expect(never.initContainerStatuses![0]!.state!.terminated).toMatchObject({ exitCode: 2, reason: 'Error' });
    expect(never.containerStatuses![0]!.state!.waiting?.reason).toBe('PodInitializing');
    expect(await podStatusColumn('initnever')).toBe('Init:Error');
    await waitFor(async () => {
      const s = (await pod('initloop')).status?.initContainerStatuses?.[0];
      return (s?.restartCount ?? 0) >= 1 && s?.state?.waiting?.reason === 'CrashLoopBackOff';
    }, 30_000, 'initloop in CrashLoopBackOff');
    expect((await pod('initloop')).status!.phase).toBe('Pending');
    expect(await podStatusColumn('initloop')).toBe('Init:CrashLoopBackOff');
    expect((await pod('initloop')).status!.initContainerStatuses![0]!.lastState?.terminated?.exitCode).toBe(2);
  }, 60_000);

  it('an exec liveness probe that starts failing restarts the container; logs --previous shows the old run',
    async () => {
      await create({ metadata: { name: 'live', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 2,
        containers: [{ name: 'c', image: 'busybox',
          command: ['sh', '-c', 'touch /tmp/healthy; echo run-$(date +%s%N); exec sleep 3600'],
          livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 2, failureThreshold: 2 } }] } });
      await waitFor(async () => (await pod('live')).status?.containerStatuses?.[0]?.ready, 30_000, 'live ready');
      const first = (await kubectl(['logs', 'live'])).out;
      expect(first).toMatch(/^run-\d+\n$/);
      expect((await kubectl(['logs', 'live', '--previous'])).err)
        .toContain('previous terminated container "c" in pod "live" not found');
      // Still alive after several periods while the file is there.
      await new Promise((r) => setTimeout(r, 1000));
      expect((await pod('live')).status!.containerStatuses![0]!.restartCount).toBe(0);
      expect((await kubectl(['exec', 'live', '--', 'rm', '/tmp/healthy'])).code).toBe(0);
      await waitFor(async () => {
        const s = (await pod('live')).status?.containerStatuses?.[0];
        return s?.restartCount === 1 && s.state?.running && s.ready;
      }, 30_000, 'live restarted');
      const s = (await pod('live')).status!.containerStatuses![0]!;
      expect(s.lastState?.terminated?.exitCode).toBe(143);
      expect((await kubectl(['logs', 'live', '--previous'])).out).toBe(first);
      const now = (await kubectl(['logs', 'live'])).out;
      expect(now).toMatch(/^run-\d+\n$/);
      expect(now).not.toBe(first);
      const ev = await events('live');
      expect(ev.some((e) => e.reason === 'Unhealthy' && e.involvedObject?.fieldPath === 'spec.containers{c}'
        && e.message === 'Liveness probe failed: cat: /tmp/healthy: No such file or directory')).toBe(true);
      expect(ev.some((e) => e.reason === 'Killing'
        && e.message === 'Container c failed liveness probe, will be restarted')).toBe(true);
    }, 60_000);

  it('a tcpSocket liveness probe on a port nothing listens on restarts; an exec readiness probe sets ready',
    async () => {
      await create({ metadata: { name: 'probes', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'tcp', image: 'busybox', command: ['sleep', '3600'],
            livenessProbe: { tcpSocket: { port: 9 }, periodSeconds: 1, failureThreshold: 1 } },
          { name: 'rdy', image: 'busybox', command: ['sleep', '3600'],
            readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 } },
        ] } });
      await waitFor(async () => (await pod('probes')).status?.containerStatuses
        ?.find((c) => c.name === 'tcp')?.restartCount, 30_000, 'tcp restarted');
      await waitFor(async () => (await pod('probes')).status?.containerStatuses
        ?.find((c) => c.name === 'rdy')?.state?.running, 30_000, 'rdy running');
      await new Promise((r) => setTimeout(r, 500));
      expect((await pod('probes')).status!.containerStatuses!.find((c) => c.name === 'rdy')!.ready).toBe(false);
      expect((await kubectl(['exec', 'probes', '-c', 'rdy', '--', 'touch', '/tmp/ready'])).code).toBe(0);
      await waitFor(async () => (await pod('probes')).status?.containerStatuses
        ?.find((c) => c.name === 'rdy')?.ready, 30_000, 'rdy ready');
      expect((await pod('probes')).status!.containerStatuses!.find((c) => c.name === 'rdy')!.restartCount).toBe(0);
    }, 60_000);

  it('a preStop exec hook runs before SIGTERM when the pod is deleted', async () => {
    await create({ metadata: { name: 'stopper', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 40,
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [{ name: 'c', image: 'busybox',
        // On SIGTERM the program prints what the hook left in the shared emptyDir and runs on
        // (SIGKILL ends it after the grace period: 4 s here).
        command: ['sh', '-c', 'trap \'echo "term: $(cat /var/kdp-life/hook)"\' TERM; echo up; '
          + 'while :; do sleep 0.1; done'],
        volumeMounts: [{ name: 'data', mountPath: '/var/kdp-life' }],
        lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop-ran > /var/kdp-life/hook'] } } } }] } });
    await waitFor(async () => (await pod('stopper')).status?.containerStatuses?.[0]?.ready, 30_000, 'stopper ready');
    expect((await kubectl(['delete', 'pod', 'stopper', '--wait=false'])).code).toBe(0);
    await waitFor(async () => (await kubectl(['logs', 'stopper'])).out === 'up\nterm: prestop-ran\n' || undefined,
      3000, 'the TERM trap printing the hook\'s file');
    await waitFor(async () => !(await cluster.client.list<Pod>(PODS)).items.some((p) => p.metadata.name === 'stopper')
      || undefined, 30_000, 'stopper gone');
  }, 60_000);
  it('what a container started in the background ends with it (its process group, as a PID namespace)', async () => {
    await create({ metadata: { name: 'orphans', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 1000 & echo bg-$!; wait'] }] } });
    let pid = 0;
    await waitFor(async () => {
      const m = /bg-(\d+)/.exec((await kubectl(['logs', 'orphans'])).out);
      pid = m ? Number(m[1]) : 0;
      return pid || undefined;
    }, 30_000, 'background pid');
    const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
    expect(alive()).toBe(true);
    expect((await kubectl(['delete', 'pod', 'orphans', '--wait=true', '--timeout=30s'])).code).toBe(0);
    await waitFor(() => !alive() || undefined, 5000, 'background sleep gone');
  }, 60_000);
  it('httpGet liveness: 2xx keeps a container, a 404 restarts the one it probes', async () => {
    await create({ metadata: { name: 'httplive', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'web', image: 'python', command: ['python3', '-m', 'http.server', '8080'],
          ports: [{ name: 'http', containerPort: 8080 }],
          livenessProbe: { httpGet: { port: 'http', path: '/' }, initialDelaySeconds: 40, periodSeconds: 1,
            failureThreshold: 2 } },
        { name: 'side', image: 'busybox', command: ['sleep', '3600'],
          livenessProbe: { httpGet: { port: 8080, path: '/kdp-no-such-page' }, initialDelaySeconds: 50,
            periodSeconds: 1, failureThreshold: 2 } },
      ] } });
    await waitFor(async () => (await pod('httplive')).status?.containerStatuses
      ?.find((c) => c.name === 'side')?.restartCount, 30_000, 'side restarted');
    expect((await pod('httplive')).status!.containerStatuses!.find((c) => c.name === 'web')!.restartCount).toBe(0);
    const ev = await events('httplive');
    expect(ev.some((e) => e.reason === 'Unhealthy' && e.involvedObject?.fieldPath === 'spec.containers{side}'
      && e.message === 'Liveness probe failed: HTTP probe failed with statuscode: 404')).toBe(true);
    expect(ev.some((e) => e.reason === 'Unhealthy' && e.involvedObject?.fieldPath === 'spec.containers{web}')).toBe(false);
  }, 60_000);
  it('a Job whose command exits 1 is retried per backoffLimit and fails', async () => {
    await cluster.client.create({ group: 'batch', version: 'v1', resource: 'jobs', namespace: 'default' },
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'failjob', namespace: 'default' },
        spec: { backoffLimit: 1, template: { spec: { restartPolicy: 'Never',
          containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo attempt; exit 1'] }] } } } } as never);
    const w = await kubectl(['wait', '--for=condition=failed', 'job/failjob', '--timeout=60s']);
    expect(w.code).toBe(0);
    const pods = (await cluster.client.list<Pod>(PODS)).items.filter((p) => p.metadata.labels?.['job-name'] === 'failjob');
    expect(pods.length).toBe(2);
    for (const p of pods) {
      expect(p.status?.phase).toBe('Failed');
      expect(p.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    }
  }, 90_000);
  it('a startup probe holds liveness and readiness back until it succeeds; failing it restarts', async () => {
    await create({ metadata: { name: 'startup', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 1,
      containers: [
        // Liveness would fail at once, but only runs after the startup probe passes (the file appears).
        { name: 'slow', image: 'busybox', command: ['sh', '-c', 'sleep 2; touch /tmp/started; exec sleep 3600'],
          startupProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1, failureThreshold: 100 },
          livenessProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1, failureThreshold: 1 } },
        { name: 'never', image: 'busybox', command: ['sleep', '3600'],
          startupProbe: { exec: { command: ['cat', '/tmp/kdp-never'] }, periodSeconds: 1, failureThreshold: 3 } },
      ] } });
    await waitFor(async () => (await pod('startup')).status?.containerStatuses?.find((c) => c.name === 'slow')?.state
      ?.running, 30_000, 'slow running');
    const early = (await pod('startup')).status!.containerStatuses!.find((c) => c.name === 'slow')!;
    expect([early.started, early.ready]).toEqual([false, false]);
    await waitFor(async () => (await pod('startup')).status?.containerStatuses?.find((c) => c.name === 'slow')?.ready,
      30_000, 'slow ready');
    expect((await pod('startup')).status!.containerStatuses!.find((c) => c.name === 'slow')!.started).toBe(true);
    await waitFor(async () => (await pod('startup')).status?.containerStatuses?.find((c) => c.name === 'never')
      ?.restartCount, 30_000, 'never restarted');
    const s = (await pod('startup')).status!.containerStatuses!;
    expect(s.find((c) => c.name === 'slow')!.restartCount).toBe(0);
    const ev = await events('startup');
    expect(ev.some((e) => e.reason === 'Killing'
      && e.message === 'Container never failed startup probe, will be restarted')).toBe(true);
    expect(ev.some((e) => e.reason === 'Unhealthy' && e.involvedObject?.fieldPath === 'spec.containers{never}'
      && e.message === 'Startup probe failed: cat: /tmp/kdp-never: No such file or directory')).toBe(true);
  }, 60_000);
  it('a postStart exec hook runs in the container; a failing one is a FailedPostStartHook and a restart', async () => {
    await create({ metadata: { name: 'poststart', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'ok', image: 'busybox', command: ['sh', '-c', 'sleep 1; cat /tmp/post; exec sleep 3600'],
          lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo post-ran > /tmp/post'] } } } },
        { name: 'bad', image: 'busybox', command: ['sleep', '3600'],
          lifecycle: { postStart: { exec: { command: ['false'] } } } },
      ] } });
    await waitFor(async () => (await pod('poststart')).status?.containerStatuses?.find((c) => c.name === 'bad')
      ?.restartCount, 30_000, 'bad restarted');
    await waitFor(async () => (await kubectl(['logs', 'poststart', '-c', 'ok'])).out === 'post-ran\n' || undefined,
      10_000, 'ok printed what its postStart hook wrote');
    expect((await pod('poststart')).status!.containerStatuses!.find((c) => c.name === 'ok')!.restartCount).toBe(0);
    const ev = await events('poststart');
    expect(ev.some((e) => e.reason === 'FailedPostStartHook' && e.involvedObject?.fieldPath === 'spec.containers{bad}'))
      .toBe(true);
    expect(ev.some((e) => e.reason === 'FailedPostStartHook' && e.involvedObject?.fieldPath === 'spec.containers{ok}'))
      .toBe(false);
  }, 60_000);
});
