import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applySysctls } from '../../src/host/sysctls.js';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { parseKubeProxyConfiguration } from '../../src/proxy/config.js';
import { kubeProxySysctls, ROUTE_LOCALNET } from '../../src/proxy/sysctls.js';
import { buildFilter } from '../../src/trace/offline.js';
import { foldArrivals } from '../../src/trace/result.js';
import type { Topology } from '../../src/trace/topology.js';
import { walk } from '../../src/trace/walk.js';

// Issue 22: kube-proxy's start-up sysctls (route_localnet for localhost NodePorts, br_netfilter,
// conntrack as upstream's conntrack.go) inside the node's namespace, and the tracer's model of a
// 127.0.0.1 source.
const defaults = parseKubeProxyConfiguration('');

describe('kube-proxy sysctl plan', () => {
  it('iptables mode with localhost NodePorts turns route_localnet on; nftables mode never', () => {
    const base = { conntrack: defaults.conntrack, cores: 2 };
    const keys = (w: ReturnType<typeof kubeProxySysctls>) => w.map((x) => `${x.key}=${x.value}`);
    expect(keys(kubeProxySysctls({ ...base, mode: 'iptables', localhostNodePorts: true }))).toEqual([
      `${ROUTE_LOCALNET}=1`, 'net.bridge.bridge-nf-call-iptables=1', 'net.bridge.bridge-nf-call-ip6tables=1',
      'net.netfilter.nf_conntrack_max=131072', 'net.netfilter.nf_conntrack_tcp_timeout_established=86400',
      'net.netfilter.nf_conntrack_tcp_timeout_close_wait=3600',
    ]);
    expect(keys(kubeProxySysctls({ ...base, mode: 'iptables', localhostNodePorts: false }))).not.toContain(`${ROUTE_LOCALNET}=1`);
    expect(keys(kubeProxySysctls({ ...base, mode: 'nftables', localhostNodePorts: true }))).not.toContain(`${ROUTE_LOCALNET}=1`);
  });

  it('conntrack: max(maxPerCore × cores, min); maxPerCore 0 and zero timeouts leave them alone', () => {
    const ct = parseKubeProxyConfiguration([
      'apiVersion: kubeproxy.config.k8s.io/v1alpha1', 'kind: KubeProxyConfiguration',
      'conntrack:', '  maxPerCore: 65536', '  min: 1000', '  tcpEstablishedTimeout: 2h', '  tcpCloseWaitTimeout: 0s', '',
    ].join('\n')).conntrack;
    const w = kubeProxySysctls({ mode: 'nftables', localhostNodePorts: false, conntrack: ct, cores: 4 });
    expect(w.find((x) => x.key === 'net.netfilter.nf_conntrack_max')?.value).toBe(262144);
    expect(w.find((x) => x.key.endsWith('timeout_established'))?.value).toBe(7200);
    expect(w.some((x) => x.key.endsWith('close_wait'))).toBe(false);
    const none = kubeProxySysctls({ mode: 'nftables', localhostNodePorts: false, conntrack: { ...ct, maxPerCore: 0 }, cores: 4 });
    expect(none.some((x) => x.key === 'net.netfilter.nf_conntrack_max')).toBe(false);
  });
});

describe('applying the sysctls in a node namespace', () => {
  it('writes in the node namespace only, raises conntrack values only, skips absent module keys, reports refusals', async () => {
    const exec = buildRecordingExec();
    const current: Record<string, string> = {
      [ROUTE_LOCALNET]: '0', 'net.netfilter.nf_conntrack_max': '65536',
      'net.netfilter.nf_conntrack_tcp_timeout_established': '432000',
      'net.netfilter.nf_conntrack_tcp_timeout_close_wait': '60',
    };
    exec.on((c) => c.args[0] === '-n', { stdout: '', stderr: '' });
    for (const [k, v] of Object.entries(current)) exec.on((c) => c.args[0] === '-n' && c.args[1] === k, { stdout: `${v}\n`, stderr: '' });
    exec.on((c) => c.args[0] === '-n' && c.args[1]!.startsWith('net.bridge.'), { fail: 'sysctl: cannot stat /proc/sys/net/bridge' });
    exec.on((c) => c.args.includes('net.netfilter.nf_conntrack_max=131072'), { fail: 'permission denied' });
    const writes = kubeProxySysctls({ mode: 'iptables', localhostNodePorts: true, conntrack: defaults.conntrack, cores: 2 });
    const problems = await applySysctls(exec, 'kdp-x-n1', writes);
    expect(exec.calls.every((c) => c.netns === 'kdp-x-n1' && c.file === 'sysctl')).toBe(true);
    const wrote = exec.calls.filter((c) => c.args[0] === '-q').map((c) => c.args[2]);
    expect(wrote).toEqual([`${ROUTE_LOCALNET}=1`, 'net.netfilter.nf_conntrack_max=131072',
      'net.netfilter.nf_conntrack_tcp_timeout_close_wait=3600']);
    expect(problems).toEqual([expect.stringContaining('net.netfilter.nf_conntrack_max=131072: not set, stays 65536')]);
  });
});

describe('tracing a 127.0.0.1 source to a localhost NodePort (iptables mode)', () => {
  const rules = readFileSync(new URL('../../rules/04-nodeport/iptables.golden', import.meta.url), 'utf8');
  const topo = (routeLocalnet: boolean): Topology => ({
    nodes: [{ name: 'n1', nodeIPs: ['172.18.0.2'], podCIDRs: ['10.244.0.0/24'], bridge: 'cni0',
      gatewayIPs: ['10.244.0.1'], underlayIface: 'eth0', filter: buildFilter('iptables', rules), routeLocalnet }],
    pods: [],
  });
  const pkt = { src: '127.0.0.1', dst: '127.0.0.1', proto: 'tcp' as const, sport: 40000, dport: 30080 };

  it('route_localnet=1: DNATed to the endpoints and masqueraded (KUBE-MARK-MASQ → KUBE-POSTROUTING)', () => {
    const r = foldArrivals(pkt, walk(topo(true), { kind: 'node', node: 'n1' }, pkt));
    expect(r.verdict).toBe('ACCEPT');
    expect(r.destinations.map((d) => [d.destination, d.masquerade])).toEqual([
      ['10.244.0.11:8080', true], ['10.244.2.11:8080', true]]);
    expect(r.destinations.every((d) => d.sourceSeen !== '127.0.0.1')).toBe(true);
  });

  it('a pod\'s 127.0.0.1 is its own loopback: the node\'s NodePort rules never see it', () => {
    const p = { ...pkt, src: '10.244.0.5' };
    const r = foldArrivals(p, walk(topo(true), { kind: 'pod', pod: 'default/a', node: 'n1' }, p));
    expect(r.destinations.map((d) => [d.reached, d.destination, d.masquerade])).toEqual([
      ['pod default/a', '127.0.0.1:30080', false]]);
    expect(r.destinations[0]!.hops.every((h) => h.where === 'default/a')).toBe(true);
  });

  it('route_localnet=0: the kernel drops the DNATed packet (martian source)', () => {
    const r = foldArrivals(pkt, walk(topo(false), { kind: 'node', node: 'n1' }, pkt));
    expect(r.verdict).toBe('DROP');
    expect(r.destinations[0]!.hops.some((h) => h.text.includes('route_localnet=0'))).toBe(true);
  });
});
