// Containers that run their spec in netns mode (issue 13), driven with the real kubectl: a Job's
// command runs to completion and its output is the pod's log, exit codes become the container's
// terminated state, env (values, downward fields, ConfigMap keys) reaches the process.

import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
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
const CMS = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' } as const;

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('containers run their spec (netns)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-run-')));
  let cluster: RunningCluster;
  const run = kubectlFor(paths.kubeconfig, { timeoutMs: 90_000 });
  const kubectl = (args: string[], input?: string, minor = 32) => run(args, { input, minor });
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

  it('each pod has its own hostname, /etc/resolv.conf, /etc/hosts and /tmp; writes stay in the pod; volumes mount',
    async () => {
      const hostHosts = readFileSync('/etc/hosts', 'utf8');
      await cluster.client.create(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'files', namespace: 'default' },
        data: { 'app.conf': 'color=green\n' } } as never);
      for (const name of ['sh1', 'sh2']) {
        await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
          spec: { ...(name === 'sh2' ? { hostname: 'box', subdomain: 'grp' } : {}),
            volumes: [{ name: 'cfg', configMap: { name: 'files' } }, { name: 'scratch', emptyDir: {} }],
            containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'],
              volumeMounts: [{ name: 'cfg', mountPath: '/etc/kdp-test-app', readOnly: true },
                { name: 'scratch', mountPath: '/var/kdp-test-scratch' }] }] } } as Pod);
      }
      for (const name of ['sh1', 'sh2']) {
        await waitFor(async () => (await cluster.client.get<Pod>(PODS, name)).status?.containerStatuses?.[0]?.ready,
          30_000, `${name} ready`);
      }
      expect((await kubectl(['exec', 'sh1', '--', 'hostname'])).out).toBe('sh1\n');
      expect((await kubectl(['exec', 'sh2', '--', 'hostname'], undefined, 27)).out).toBe('box\n');
      const ip1 = (await cluster.client.get<Pod>(PODS, 'sh1')).status!.podIP!;
      const ip2 = (await cluster.client.get<Pod>(PODS, 'sh2')).status!.podIP!;
      const resolv = await kubectl(['exec', 'sh1', '--', 'cat', '/etc/resolv.conf']);
      expect(resolv.out).toMatch(/^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local/);
      expect(resolv.out).toContain('nameserver 10.96.0.10\n');
      expect(resolv.out).toContain('options ndots:5\n');
      const hosts = await kubectl(['exec', 'sh2', '--', 'cat', '/etc/hosts']);
      expect(hosts.out).toContain('# Kubernetes-managed hosts file.\n');
      expect(hosts.out).toContain(`${ip2}\tbox.grp.default.svc.cluster.local\tbox\n`);
      // Writes inside a pod reach neither the host nor another pod.
      expect((await kubectl(['exec', 'sh1', '--', 'sh', '-c',
        'echo 1.2.3.4 evil >> /etc/hosts && echo pod1 > /tmp/kdp-test-mark && echo x > /var/kdp-test-scratch/f'])).code)
        .toBe(0);
      expect(readFileSync('/etc/hosts', 'utf8')).toBe(hostHosts);
      expect(existsSync('/tmp/kdp-test-mark')).toBe(false);
      expect(existsSync('/var/kdp-test-scratch')).toBe(false);
      expect(existsSync('/etc/kdp-test-app')).toBe(false);
      expect((await kubectl(['exec', 'sh1', '--', 'cat', '/etc/hosts'])).out).toContain('1.2.3.4 evil');
      expect((await kubectl(['exec', 'sh2', '--', 'cat', '/etc/hosts'])).out).not.toContain('evil');
      expect((await kubectl(['exec', 'sh2', '--', 'ls', '/tmp/kdp-test-mark'])).code).not.toBe(0);
      expect((await kubectl(['exec', 'sh1', '--', 'cat', '/var/kdp-test-scratch/f'])).out).toBe('x\n');
      expect((await kubectl(['exec', 'sh1', '--', 'cat', '/etc/kdp-test-app/app.conf'])).out).toBe('color=green\n');
      expect((await kubectl(['exec', 'sh1', '--', 'sh', '-c', 'echo y > /etc/kdp-test-app/new'])).code).not.toBe(0);
      // The process runs in the pod's network namespace with its own IP.
      expect((await kubectl(['exec', 'sh1', '--', 'ip', '-o', '-4', 'addr', 'show', 'dev', 'eth0'])).out)
        .toContain(`inet ${ip1}/`);
      // The service-account token volume (kube-api-access) and the API server's env vars.
      const sa = await kubectl(['exec', 'sh1', '--', 'sh', '-c',
        'cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo; echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT']);
      expect(sa.out).toBe('default\n10.96.0.1:443\n');
    }, 90_000);

  it('the DNS addon\'s coredns pods run kdp/dns (Corefile from their ConfigMap volume, in-cluster credentials): '
    + 'a pod resolves Service names through its resolv.conf', async () => {
    await waitFor(async () => {
      const list = await cluster.client.list<Pod>({ ...PODS, namespace: 'kube-system' });
      const dns = list.items.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns');
      return dns.length > 0 && dns.every((p) => p.status?.containerStatuses?.[0]?.ready) || undefined;
    }, 30_000, 'coredns ready');
    const r = await kubectl(['exec', 'sh1', '--', 'getent', 'hosts', 'kubernetes.default']);
    expect(r.out).toMatch(/^10\.96\.0\.1\s+kubernetes\.default\.svc\.cluster\.local\n$/);
  }, 60_000);

  it('kubectl run -i --rm pipes stdin into the container\'s shell, in the pod; the pod goes afterwards', async () => {
    const r = await kubectl(['run', 'piped', '-i', '--rm', '--restart=Never', '--image=busybox', '--', 'sh'],
      'echo hi-$((6*7)); hostname; cat /etc/hostname\n');
    expect(r.out).toContain('hi-42\npiped\npiped\n');
    expect(r.code).toBe(0);
    await waitFor(async () => !(await cluster.client.list<Pod>(PODS)).items.some((p) => p.metadata.name === 'piped')
      || undefined, 30_000, 'piped deleted');
  }, 90_000);

  // kubectl run --rm -it and kubectl cp: the shared scenario (test/helpers/pod-work-scenario.ts).

  it('a volume kdp cannot mount is a FailedCreatePodSandBox Warning naming it; the pod stays Pending', async () => {
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'badmount', namespace: 'default' },
      spec: { volumes: [{ name: 'd', emptyDir: {} }], containers: [{ name: 'c', image: 'busybox', command: ['sleep', '60'],
        volumeMounts: [{ name: 'd', mountPath: '/kdp-no-such-top/dir' }] }] } } as Pod);
    await waitFor(async () => {
      const ev = await cluster.client.list<{ reason?: string; message?: string; involvedObject?: { name?: string } } & Pod>(
        { group: '', version: 'v1', resource: 'events', namespace: 'default' });
      return ev.items.find((e) => e.involvedObject?.name === 'badmount' && e.reason === 'FailedCreatePodSandBox'
        && e.message?.includes('mountPath /kdp-no-such-top/dir'));
    }, 30_000, 'FailedCreatePodSandBox event');
    expect((await cluster.client.get<Pod>(PODS, 'badmount')).status?.phase).toBe('Pending');
  }, 60_000);
});
