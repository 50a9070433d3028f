import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { podListeners } from '../../src/trace/listeners.js';
import { buildFilter } from '../../src/trace/offline.js';
import { foldArrivals } from '../../src/trace/result.js';
import type { Topology } from '../../src/trace/topology.js';
import { walk } from '../../src/trace/walk.js';

const pod = (containers: unknown[]): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers } } as Pod);

describe('what listens where', () => {
  it('kdp/echo listens on its declared ports (TCP and UDP), else 8080; any other program is unknown', () => {
    expect(podListeners(pod([{ name: 'a', image: 'kdp/echo' }]))).toEqual(['8080/TCP', '8080/UDP']);
    expect(podListeners(pod([{ name: 'a', image: 'docker.io/kdp/echo:latest', ports: [{ containerPort: 53, protocol: 'UDP' }] },
      { name: 'b', image: 'kdp/echo', ports: [{ containerPort: 80 }] }]))).toEqual(['53/TCP', '53/UDP', '80/TCP', '80/UDP']);
    expect(podListeners(pod([{ name: 'a', image: 'kdp/echo' }, { name: 'b', image: 'nginx' }]))).toBeUndefined();
    expect(podListeners(pod([{ name: 'a', image: 'kdp/echo', command: ['sleep', '1'] }]))).toBeUndefined();
  });

  const filter = buildFilter('iptables', '*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n');
  const topo: Topology = {
    nodes: [{ name: 'n1', nodeIPs: ['172.18.0.2'], podCIDRs: ['10.244.0.0/24'], bridge: 'cni0',
      gatewayIPs: ['10.244.0.1'], underlayIface: 'eth0', filter }],
    pods: [{ name: 'default/a', ip: '10.244.0.5', node: 'n1' },
      { name: 'default/web', ip: '10.244.0.6', node: 'n1', listeners: ['8080/TCP', '8080/UDP'] }],
  };
  const trace = (dport: number, proto: 'tcp' | 'udp' | 'sctp' | 'icmp' = 'tcp') => {
    const pkt = { src: '10.244.0.5', dst: '10.244.0.6', proto, sport: 40000, dport };
    return foldArrivals(pkt, walk(topo, { kind: 'pod', pod: 'default/a', node: 'n1' }, pkt));
  };

  it('a packet to a port the pod listens on is delivered; to any other the pod\'s kernel refuses it', () => {
    expect(trace(8080).verdict).toBe('ACCEPT');
    expect(trace(8080, 'udp').verdict).toBe('ACCEPT');
    const r = trace(9999);
    expect(r.verdict).toBe('REJECT');
    expect(r.destinations[0]!.reached).toBe('pod default/web');
    expect(r.hops.at(-1)!.text).toBe('nothing in default/web listens on TCP 9999 (it listens on 8080/TCP, 8080/UDP): ' +
      'the kernel answers RST (connection refused)');
    expect(trace(9999, 'udp').hops.at(-1)!.text).toContain('ICMP port unreachable');
    expect(trace(8080, 'sctp').verdict).toBe('REJECT');
    expect(trace(0, 'icmp').verdict).toBe('ACCEPT');
  });

  it('a pod whose listeners are unknown answers every port', () => {
    const pkt = { src: '10.244.0.6', dst: '10.244.0.5', proto: 'tcp' as const, sport: 40000, dport: 9999 };
    expect(foldArrivals(pkt, walk(topo, { kind: 'pod', pod: 'default/web', node: 'n1' }, pkt)).verdict).toBe('ACCEPT');
  });
});
