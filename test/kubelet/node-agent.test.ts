import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease, Node, Pod } from '../../src/api/types.js';
import { cpus, totalmem } from 'node:os';
import { buildNodeAgent } from '../../src/kubelet/node-agent.js';
import { buildVirtualRuntime } from '../../src/kubelet/runtime-virtual.js';
import { buildMemoryIpamStore } from '../../src/cni/ipam/store.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const PODS = ref('pods', 'default');
const LEASES = ref('leases', 'kube-node-lease', 'coordination.k8s.io');

describe('virtual runtime', () => {
  it('allocates IPs host-local style and releases them when a pod is killed', async () => {
    const store = buildMemoryIpamStore();
    const rt = buildVirtualRuntime({ store });
    const p = (uid: string): Pod => ({ metadata: { name: uid, uid }, spec: { containers: [{ name: 'c' }] } });
    const net = { podCIDRs: ['10.244.3.0/24'] };
    expect((await rt.runPod(p('a'), net)).podIPs).toEqual(['10.244.3.2']);
    expect((await rt.runPod(p('a'), net)).podIPs).toEqual(['10.244.3.2']); // idempotent
    expect((await rt.runPod(p('b'), net)).podIPs).toEqual(['10.244.3.3']);
    await rt.killPod('a');
    expect(store.list().map((e) => e.ip)).toEqual(['10.244.3.3']);
    expect((await rt.runPod(p('c'), net)).podIPs).toEqual(['10.244.3.4']);
    await rt.close();
  });

  it('moves containers from ContainerCreating to running and ready, with a synthetic log', async () => {
    const rt = buildVirtualRuntime({ startDelayMs: 5 });
    const changes: string[] = [];
    rt.onChange((uid) => changes.push(uid));
    const st = await rt.runPod({ metadata: { name: 'x', uid: 'x' },
      spec: { containers: [{ name: 'web', image: 'nginx' }] } }, { podCIDRs: ['10.0.0.0/24'] });
    expect(st.containers[0]).toMatchObject({ state: 'waiting', reason: 'ContainerCreating', ready: false });
    await waitFor(() => changes.length > 0);
    expect(rt.podStatus('x')!.containers[0]).toMatchObject({ state: 'running', ready: true });
    expect(rt.logs('x', 'web')).toContain('started container web (image nginx)');
    await rt.close();
  });
});

describe('node agent', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, nodes: [{ name: 'w1', options: { cpu: '8', memory: '16Gi' } }] });
  });
  afterAll(async () => { await c?.close(); });

  it('registers its Node with capacity, addresses, conditions and kubelet version', async () => {
    const n = await c.client.get<Node>(ref('nodes'), 'w1');
    expect(n.status?.capacity).toMatchObject({ cpu: '8', memory: '16Gi', pods: '110' });
    expect(n.status?.allocatable).toMatchObject({ cpu: '8', memory: '16Gi', pods: '110' });
    expect(n.status?.addresses).toEqual([{ type: 'InternalIP', address: '172.18.0.2' },
      { type: 'Hostname', address: 'w1' }]);
    expect(n.status?.conditions?.find((x) => x.type === 'Ready'))
      .toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(n.status?.nodeInfo?.kubeletVersion).toBe('v1.33.0');
    expect(n.metadata.labels?.['kubernetes.io/hostname']).toBe('w1');
  });

  it('reports the machine\'s CPUs and memory when its runtime runs real processes, a documented default when virtual', async () => {
    const real = buildNodeAgent({
      client: c.client, nodeName: 'w-real',
      runtime: { ...buildVirtualRuntime({}), nodeInfo: { osImage: 'test', kernelVersion: 'test' } },
      options: { nodeIP: '172.18.0.90', timeScale: 0.01 },
    });
    const virtual = buildNodeAgent({
      client: c.client, nodeName: 'w-virtual', runtime: buildVirtualRuntime({}),
      options: { nodeIP: '172.18.0.91', timeScale: 0.01 },
    });
    await real.start();
    await virtual.start();
    try {
      const r = await c.client.get<Node>(ref('nodes'), 'w-real');
      expect(r.status?.capacity).toMatchObject({
        cpu: String(cpus().length), memory: `${Math.floor(totalmem() / 1024)}Ki` });
      const v = await c.client.get<Node>(ref('nodes'), 'w-virtual');
      expect(v.status?.capacity).toMatchObject({ cpu: '4', memory: '8Gi' });
    } finally {
      await real.stop();
      await virtual.stop();
      await c.client.delete(ref('nodes'), 'w-real');
      await c.client.delete(ref('nodes'), 'w-virtual');
    }
  });

  it('renews its Lease in kube-node-lease while running', async () => {
    const first = await waitFor(() => c.client.get<Lease>(LEASES, 'w1'));
    expect(first.spec).toMatchObject({ holderIdentity: 'w1', leaseDurationSeconds: 40 });
    expect(first.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    await waitFor(async () => (await c.client.get<Lease>(LEASES, 'w1')).spec?.renewTime !== first.spec?.renewTime);
  });

  it('publishes pod status and serves logs through the API server', async () => {
    await c.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'solo' },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });
    const p = await waitFor(async () => {
      const x = await c.client.get<Pod>(PODS, 'solo');
      return x.status?.phase === 'Running' && x.status.conditions?.find((k) => k.type === 'Ready')
        ?.status === 'True' ? x : undefined;
    });
    expect(p.status?.conditions?.map((k) => `${k.type}=${k.status}`).sort()).toEqual([
      'ContainersReady=True', 'Initialized=True', 'PodReadyToStartContainers=True',
      'PodScheduled=True', 'Ready=True']);
    expect(p.status?.containerStatuses?.[0]).toMatchObject({ name: 'app', ready: true,
      restartCount: 0, image: 'nginx:1.27', started: true });
    expect(p.status?.podIPs).toEqual([{ ip: p.status?.podIP }]);
    expect(p.status?.hostIP).toBe('172.18.0.2');
    expect(p.status?.startTime).toBeDefined();
    const text = await c.service.logs({ user: { name: 'admin', groups: ['system:masters'] } },
      { group: '', version: 'v1', resource: 'pods', namespace: 'default', name: 'solo', subresource: 'log' }, {});
    let all = '';
    for await (const chunk of typeof text === 'string' ? [text] : text) all += Buffer.from(chunk).toString();
    expect(all).toContain('started container app (image nginx:1.27)');
  });

  it('deletes a pod gracefully: it stays terminating for the grace period, then goes and frees its IP', async () => {
    await c.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'slow' },
      spec: { terminationGracePeriodSeconds: 60, containers: [{ name: 'app', image: 'x' }] } });
    const p = await waitFor(async () => {
      const x = await c.client.get<Pod>(PODS, 'slow');
      return x.status?.podIP ? x : undefined;
    });
    const deleted = await c.client.delete<Pod>(PODS, 'slow');
    expect(deleted.metadata.deletionTimestamp).toBeDefined();
    expect(deleted.metadata.deletionGracePeriodSeconds).toBe(60);
    expect((await c.client.get<Pod>(PODS, 'slow')).metadata.deletionTimestamp).toBeDefined();
    await waitFor(async () => !(await listItems<Pod>(c.client, PODS)).some((x) => x.metadata.name === 'slow'),
      20_000, 'pod removed after grace');
    // The freed address is not reused at once (round-robin), but it is no longer held.
    await c.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'next' },
      spec: { containers: [{ name: 'app', image: 'x' }] } });
    const next = await waitFor(async () => (await c.client.get<Pod>(PODS, 'next')).status?.podIP);
    expect(next).not.toBe(p.status?.podIP);
  });

  it('stop() ends the heartbeats', async () => {
    const agent = c.agents.get('w1')!;
    await agent.stop();
    const a = (await c.client.get<Lease>(LEASES, 'w1')).spec?.renewTime;
    await new Promise((r) => setTimeout(r, 400)); // 4 renew intervals at this time scale
    expect((await c.client.get<Lease>(LEASES, 'w1')).spec?.renewTime).toBe(a);
  });
});
