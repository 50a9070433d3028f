// The pieces of kube-system's DaemonSets on their own: kubeadm's kube-proxy config.conf as kdp
// writes it, where a kube-proxy pod's --config comes from, kube-proxy's /healthz, and the
// kubelet's host-component runtime (a pod of a component image starts and stops the component;
// a failing start is CrashLoopBackOff and retried; other pods go to the wrapped runtime).

import { createServer, type Server } from 'node:net';
import { get } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { kubeProxyAddonObjects, kubeProxyConfigConf, kubeProxyConfigSource } from '../../src/cluster/addons/kube-proxy.js';
import { netNodeOf, planPeers } from '../../src/cni/backend.js';
import { etcdHealth, etcdStaticPods } from '../../src/cluster/etcd-pods.js';
import { withHostComponents, type HostComponent } from '../../src/kubelet/host-components.js';
import { buildVirtualRuntime } from '../../src/kubelet/runtime-virtual.js';
import { parseKubeProxyConfiguration } from '../../src/proxy/config.js';
import { buildProxyHealth, healthzAddress, serveHealthz } from '../../src/proxy/healthz-server.js';
import { waitFor } from '../helpers/cluster.js';

const kubeProxyPod = (uid: string): Pod => {
  const ds = kubeProxyAddonObjects({ configConf: 'mode: iptables\n', server: 'https://172.18.0.1:6443' })
    .find((o) => o.obj.kind === 'DaemonSet')!.obj as unknown as { spec: { template: { spec: Pod['spec'] } } };
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: `kube-proxy-${uid}`, namespace: 'kube-system', uid },
    spec: ds.spec.template.spec } as Pod;
};

describe('kube-proxy config.conf', () => {
  it('sets --mode over the file\'s, adds kubeadm\'s kubeconfig path, keeps the rest and its comments', () => {
    const text = kubeProxyConfigConf('# mine\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n' +
      'mode: iptables\nclusterCIDR: "10.244.0.0/16"\n', 'nftables');
    expect(text).toContain('# mine');
    expect(text).toMatch(/^mode: nftables$/m);
    expect(text).toContain('clientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf');
    expect(parseKubeProxyConfiguration(text).mode).toBe('nftables');
  });
  it('refuses a bad file naming the field', () => {
    expect(() => kubeProxyConfigConf('mode: bogus\n', 'iptables')).toThrow(/mode/);
  });
  it('finds the pod\'s --config in its ConfigMap volume, and says what is wrong otherwise', () => {
    expect(kubeProxyConfigSource(kubeProxyPod('a'))).toEqual({ configMap: 'kube-proxy', key: 'config.conf' });
    const noFlag = kubeProxyPod('b');
    noFlag.spec!.containers[0]!.command = ['/usr/local/bin/kube-proxy'];
    expect(() => kubeProxyConfigSource(noFlag)).toThrow(/needs --config/);
    const elsewhere = kubeProxyPod('c');
    elsewhere.spec!.containers[0]!.command = ['/usr/local/bin/kube-proxy', '--config=/etc/kp.conf'];
    expect(() => kubeProxyConfigSource(elsewhere)).toThrow(/not in a configMap volume/);
  });
});

describe('kube-proxy /healthz', () => {
  it('is unhealthy before the first apply, healthy after, and again unhealthy once applies stop for the timeout', () => {
    let now = 1000;
    const h = buildProxyHealth(60_000, () => now);
    expect(h.check().healthy).toBe(false);
    h.updated();
    now += 60_000;
    expect(h.check()).toEqual({ healthy: true, lastUpdated: 1000 });
    now += 1;
    expect(h.check().healthy).toBe(false);
  });
  it('reads healthzBindAddress (default 0.0.0.0:10256)', () => {
    expect(healthzAddress(undefined)).toEqual({ host: '0.0.0.0', port: 10256 });
    expect(healthzAddress('healthzBindAddress: 127.0.0.1:12345\n')).toEqual({ host: '127.0.0.1', port: 12345 });
    expect(healthzAddress('healthzBindAddress: "[::]:10256"\n')).toEqual({ host: '::', port: 10256 });
  });
  it('answers 200/503 with upstream\'s JSON, 404 elsewhere', async () => {
    const health = buildProxyHealth(1000);
    const listener: Server = createServer();
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const close = serveHealthz(listener, health);
    const port = (listener.address() as { port: number }).port;
    const fetch = (path: string) => new Promise<{ code: number; body: string; type?: string }>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path }, (r) => {
        let b = '';
        r.on('data', (d) => { b += d; });
        r.on('end', () => resolve({ code: r.statusCode!, body: b, type: r.headers['content-type'] }));
      }).on('error', reject);
    });
    try {
      expect((await fetch('/healthz')).code).toBe(503);
      health.updated();
      const ok = await fetch('/healthz');
      expect(ok.code).toBe(200);
      expect(ok.type).toBe('application/json');
      expect(JSON.parse(ok.body)).toMatchObject({ nodeEligible: true });
      expect((await fetch('/livez')).code).toBe(200);
      expect((await fetch('/metrics')).code).toBe(404);
    } finally {
      close();
    }
  });
});

describe('the kubelet\'s host components', () => {
  const net = { podCIDRs: ['10.244.0.0/24'] };
  it('runs the component for a hostNetwork kube-proxy pod with the node\'s IP, ready as it says, stopped with the pod', async () => {
    let isReady = false;
    const events: string[] = [];
    const component: HostComponent = { async start(pod, log) {
      events.push(`start ${pod.metadata.name}`);
      log('I started');
      return { ready: () => isReady, stop: async () => { events.push(`stop ${pod.metadata.name}`); } };
    } };
    const rt = withHostComponents(buildVirtualRuntime(), { nodeIPs: ['172.18.0.2'], components: { 'kube-proxy': component },
      readinessPeriodMs: 10 });
    const changed: string[] = [];
    rt.onChange((uid) => changed.push(uid));
    const first = await rt.runPod(kubeProxyPod('u1'), net);
    expect(first.podIPs).toEqual(['172.18.0.2']);
    expect(first.containers[0]).toMatchObject({ state: 'waiting', reason: 'ContainerCreating' });
    await waitFor(() => rt.podStatus('u1')?.containers[0]?.state === 'running' || undefined, 2000, 'running');
    expect(rt.podStatus('u1')?.containers[0]?.ready).toBe(false);
    isReady = true;
    await waitFor(() => rt.podStatus('u1')?.containers[0]?.ready || undefined, 2000, 'ready');
    expect(changed).toContain('u1');
    expect(rt.logs('u1', 'kube-proxy')).toMatch(/I started\n$/);
    await rt.stopPod!('u1', 30_000);
    expect(rt.podStatus('u1')?.containers[0]).toMatchObject({ state: 'exited', exitCode: 0, ready: false });
    await rt.killPod('u1');
    expect(rt.podStatus('u1')).toBeUndefined();
    expect(events).toEqual(['start kube-proxy-u1', 'stop kube-proxy-u1']);
  });

  it('a start that fails is CrashLoopBackOff with the error in the log, then started again with restartCount 1', async () => {
    let n = 0;
    const errors: string[] = [];
    const component: HostComponent = { async start() {
      if (n++ === 0) throw new Error('configmap "kube-proxy" not found');
      return { ready: () => true, stop: async () => {} };
    } };
    const rt = withHostComponents(buildVirtualRuntime(), { nodeIPs: ['172.18.0.2'], components: { 'kube-proxy': component },
      timeScale: 0.001, readinessPeriodMs: 10, onError: (_p, e) => errors.push((e as Error).message) });
    await rt.runPod(kubeProxyPod('u2'), net);
    await waitFor(() => rt.podStatus('u2')?.containers[0]?.reason === 'CrashLoopBackOff' || undefined, 2000, 'back-off');
    expect(rt.podStatus('u2')?.containers[0]?.message).toMatch(/^back-off 10s restarting failed container=kube-proxy pod=kube-proxy-u2_kube-system\(u2\)$/);
    expect(errors).toEqual(['configmap "kube-proxy" not found']);
    await waitFor(() => rt.podStatus('u2')?.containers[0]?.ready || undefined, 2000, 'the second start');
    expect(rt.podStatus('u2')?.containers[0]).toMatchObject({ state: 'running', restartCount: 1,
      lastTerminated: { exitCode: 1, reason: 'Error' } });
    expect(rt.logs('u2', 'kube-proxy', true)).toContain('failed to start: configmap "kube-proxy" not found');
    await rt.stopComponents();
  });

  it('leaves other pods (and a kube-proxy image without hostNetwork) to the wrapped runtime', async () => {
    const rt = withHostComponents(buildVirtualRuntime(), { nodeIPs: ['172.18.0.2'],
      components: { 'kube-proxy': { start: async () => { throw new Error('not for me'); } } } });
    const pod = kubeProxyPod('u3');
    pod.spec!.hostNetwork = false;
    const st = await rt.runPod(pod, net);
    expect(st.podIPs[0]).toMatch(/^10\.244\.0\./);
    expect(rt.listPods()).toEqual(['u3']);
  });
});

describe('kdp-cni routes', () => {
  it('a route per other node\'s podCIDR via its InternalIP; nodes without either are left out', () => {
    const node = (name: string, ip?: string, cidr?: string) => ({ metadata: { name },
      spec: cidr ? { podCIDRs: [cidr] } : {}, status: ip ? { addresses: [{ type: 'InternalIP', address: ip }] } : {} });
    const nodes = [node('n2', '172.18.0.3', '10.244.1.0/24'), node('n1', '172.18.0.2', '10.244.0.0/24'),
      node('n3', '172.18.0.4'), node('n4', undefined, '10.244.3.0/24')].map((n) => netNodeOf(n as never));
    expect(planPeers(nodes[1]!, nodes))
      .toEqual({ vxlan: [], hostGw: [{ name: 'n2', ips: ['172.18.0.3'], podCIDRs: ['10.244.1.0/24'] }] });
  });
});

describe('etcd static pods and health', () => {
  const layout = { members: [0, 1, 2].map((i) => ({ name: `etcd-${i}`, clientPort: 2379 + i * 10, peerPort: 2380 + i * 10 })) };
  it('one member per node as kubeadm\'s stacked etcd when there are enough nodes, all on the first node otherwise', () => {
    const spread = etcdStaticPods('/nonexistent', layout, ['n1', 'n2', 'n3', 'n4']);
    expect([...spread].map(([n, pods]) => [n, pods.map((p) => p.manifest.metadata.name)]))
      .toEqual([['n1', ['etcd']], ['n2', ['etcd']], ['n3', ['etcd']]]);
    const cmd = spread.get('n2')![0]!.manifest.spec!.containers[0]!.command!;
    expect(cmd).toContain('--name=etcd-1');
    expect(cmd).toContain('--listen-client-urls=https://127.0.0.1:2389');
    expect(cmd).toContain('--initial-cluster=etcd-0=https://127.0.0.1:2380,etcd-1=https://127.0.0.1:2390,etcd-2=https://127.0.0.1:2400');
    const packed = etcdStaticPods('/nonexistent', layout, ['n1', 'n2']);
    expect([...packed].map(([n, pods]) => [n, pods.map((p) => p.manifest.metadata.name)]))
      .toEqual([['n1', ['etcd-0', 'etcd-1', 'etcd-2']]]);
  });
  it('a server that does not answer is unhealthy with the reason, named etcd-<i> in order', async () => {
    const [h] = await etcdHealth(['http://127.0.0.1:1'], {}, 500);
    expect(h).toMatchObject({ name: 'etcd-0', healthy: false });
    expect(h!.error).toMatch(/ECONNREFUSED/);
  });
});
