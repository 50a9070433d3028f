import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const run = promisify(execFile);
const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.32';
const hasKubectl = existsSync(KUBECTL);
if (!hasKubectl && process.env.CI === 'true') throw new Error(`CI=true but ${KUBECTL} is missing`);

describe.runIf(hasKubectl)('kdp up (virtual mode) end to end with the real kubectl', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-up-'));
  const paths = dataDirPaths(dataDir);
  const cache = mkdtempSync(join(tmpdir(), 'kdp-kc-'));
  let cluster: RunningCluster;
  const kubectl = async (...args: string[]) =>
    (await run(KUBECTL, ['--kubeconfig', paths.kubeconfig, '--cache-dir', cache, ...args])).stdout;
  const json = async (...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json'));

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 3, port: 0, proxyMode: 'iptables', timeScale: 20, progress: () => {} });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it('kubectl sees three Ready nodes with pod CIDRs in node order', async () => {
    const nodes = await json('get', 'nodes');
    expect(nodes.items.map((n: any) => [n.metadata.name, n.spec.podCIDR])).toEqual([
      ['n1', '10.244.0.0/24'], ['n2', '10.244.1.0/24'], ['n3', '10.244.2.0/24'],
    ]);
  });

  it('a Deployment behind a NodePort Service is programmed into every node and verifies clean', async () => {
    await kubectl('create', 'deployment', 'web', '--image=kdp/echo', '--replicas=4', '--port=8080');
    await kubectl('expose', 'deployment', 'web', '--port=80', '--target-port=8080', '--type=NodePort');
    await kubectl('create', 'service', 'clusterip', 'empty', '--tcp=80:80');
    const ready = await waitFor(async () => {
      const s = await json('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web');
      const eps = s.items.flatMap((x: any) => x.endpoints ?? []).filter((e: any) => e.conditions?.ready);
      return eps.length === 4 ? eps : undefined;
    }, 30_000, 'four ready endpoints');
    const podIPs = ready.map((e: any) => e.addresses[0]).sort();
    const svc = await json('get', 'service', 'web');
    await waitFor(async () => {
      const r = await kdp('trace', '--data-dir', dataDir, '-o', 'json', 'n3', `svc/default/web:80`);
      const dests = JSON.parse(r.out).destinations.map((d: any) => d.destination.split(':')[0]).sort();
      return JSON.stringify(dests) === JSON.stringify(podIPs);
    }, 30_000, 'n3 to route web to all four pods');
    const v = await kdp('verify', '--data-dir', dataDir, '-o', 'json');
    const report = JSON.parse(v.out);
    expect(report.checks.map((c: any) => [c.name, c.failed])).toEqual(report.checks.map((c: any) => [c.name, 0]));
    expect(v.code).toBe(0);
    const np = svc.spec.ports[0].nodePort;
    const r = JSON.parse((await kdp('trace', '--data-dir', dataDir, '-o', 'json', '198.51.100.7', `n2:${np}`)).out);
    expect(r.masquerade).toBe(true);
    expect(r.destinations.map((d: any) => d.destination.split(':')[0]).sort()).toEqual(podIPs);
  });

  it('the seed flow is visible in kubectl get events, and kubectl logs reaches the node', async () => {
    const events = (await json('get', 'events')).items.map((e: any) => e.reason);
    for (const reason of ['ScalingReplicaSet', 'SuccessfulCreate', 'Scheduled']) expect(events).toContain(reason);
    const pod = (await json('get', 'pods', '-l', 'app=web')).items[0];
    expect((await kubectl('logs', pod.metadata.name)).length).toBeGreaterThan(0);
  });

  it('pod to pod across nodes is NAT-free', async () => {
    const pods = (await json('get', 'pods', '-l', 'app=web')).items;
    const a = pods.find((p: any) => p.spec.nodeName === 'n1') ?? pods[0];
    const b = pods.find((p: any) => p.spec.nodeName !== a.spec.nodeName);
    const r = await kdp('trace', '--data-dir', dataDir, `default/${a.metadata.name}`, `${b.metadata.name}:8080`);
    expect(r.out).toContain('NAT-free: yes');
  });

  it('rule history keeps numbered syncs and kdp rules shows the Service', async () => {
    const h = JSON.parse((await kdp('rules', 'history', '--data-dir', dataDir, '--node', 'n1', '-o', 'json')).out);
    expect(h.length).toBeGreaterThan(1);
    expect(h[0].full).toBe(true);
    expect((await kdp('rules', '--data-dir', dataDir, '--node', 'n1')).out).toContain('default/web cluster IP');
  });

  it('kdp node stop makes the node NotReady (lease expires) and start brings it back', async () => {
    expect((await kdp('node', 'stop', '--data-dir', dataDir, 'n3')).code).toBe(0);
    await waitFor(async () => {
      const n = await json('get', 'node', 'n3');
      return n.status.conditions.find((c: any) => c.type === 'Ready')?.status === 'Unknown';
    }, 30_000, 'n3 Unknown');
    expect((await kdp('node', 'start', '--data-dir', dataDir, 'n3')).code).toBe(0);
    await waitFor(async () => {
      const n = await json('get', 'node', 'n3');
      return n.status.conditions.find((c: any) => c.type === 'Ready')?.status === 'True';
    }, 30_000, 'n3 Ready again');
  });

  it('kubectl exec into a virtual pod says that virtual nodes run no processes', async () => {
    const pod = (await json('get', 'pods', '-l', 'app=web')).items[0].metadata.name;
    const r = await new Promise<{ code: number; err: string }>((resolve) => {
      execFile(KUBECTL, ['--kubeconfig', paths.kubeconfig, '--cache-dir', cache, 'exec', pod, '--', 'true'],
        (e: Error | null, _o: string, err: string) => resolve({ code: e ? 1 : 0, err }));
    });
    expect(r.code).toBe(1);
    expect(r.err).toContain('virtual nodes run no processes');
  });

  it('kdp node partition and crash fail a virtual node too, and start brings it back', async () => {
    for (const verb of ['partition', 'crash']) {
      expect((await kdp('node', verb, '--data-dir', dataDir, 'n3')).code).toBe(0);
      await waitFor(async () => {
        const n = await json('get', 'node', 'n3');
        return n.status.conditions.find((c: any) => c.type === 'Ready')?.status === 'Unknown';
      }, 30_000, `n3 Unknown after ${verb}`);
      expect((await kdp('node', 'start', '--data-dir', dataDir, 'n3')).code).toBe(0);
      await waitFor(async () => {
        const n = await json('get', 'node', 'n3');
        return n.status.conditions.find((c: any) => c.type === 'Ready')?.status === 'True';
      }, 30_000, `n3 Ready after ${verb}`);
    }
  });
});
