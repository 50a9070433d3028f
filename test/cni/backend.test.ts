// The pod network's backends between nodes (issue 19): which path a node takes to each peer,
// what it publishes, what a VXLAN sync writes to the kernel (recorded), the lab cloud's host-gw
// routes, and the trace's encapsulation facts — all from the same Node objects.

import { describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/types.js';
import {
  backendAnnotations, netNodeOf, parseBackend, pathBetween, planPeers, type Backend,
} from '../../src/cni/backend.js';
import { labRoutesFor } from '../../src/cluster/lab-cloud.js';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { syncVxlanPeers, VTEP_LINK, vtepMac } from '../../src/host/vxlan.js';
import { vxlanInfoOf } from '../../src/trace/overlay.js';

function node(name: string, ip: string, cidr: string, backend?: Backend, underlay?: string): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, annotations: backend
    ? backendAnnotations({ backend, nodeIP: ip, underlayCIDR: underlay ?? `${ip.split('.').slice(0, 2).join('.')}.0.0/16`,
      vtepMac: vtepMac(ip) }) : {} },
  spec: { podCIDRs: [cidr] }, status: { addresses: [{ type: 'InternalIP', address: ip }] } } as Node;
}

describe('pod network backends', () => {
  it('parses --backend and names the field when wrong', () => {
    expect(parseBackend(undefined)).toBe('host-gw');
    expect(parseBackend('auto')).toBe('auto');
    expect(() => parseBackend('gre')).toThrow('--backend: "gre" is not one of host-gw, vxlan, auto');
  });

  it('publishes flannel\'s annotations and reads them back', () => {
    const n = netNodeOf(node('n2', '172.19.0.2', '10.244.1.0/24', 'vxlan'));
    expect(n).toEqual({ name: 'n2', ips: ['172.19.0.2'], podCIDRs: ['10.244.1.0/24'], backend: 'vxlan',
      underlayCIDR: '172.19.0.0/16', vtepMac: '02:76:ac:13:00:02' });
    const a = backendAnnotations({ backend: 'host-gw', nodeIP: '172.18.0.2', underlayCIDR: '172.18.0.0/16' });
    expect(a['flannel.alpha.coreos.com/backend-type']).toBe('host-gw');
    expect(a['flannel.alpha.coreos.com/backend-data']).toBe('null');
  });

  it('auto: host-gw on the same segment, vxlan across; vxlan: always; host-gw: always; no VTEP yet: no path', () => {
    const a = netNodeOf(node('a', '172.18.0.2', '10.244.0.0/24', 'auto'));
    const same = netNodeOf(node('b', '172.18.0.3', '10.244.1.0/24', 'auto'));
    const far = netNodeOf(node('c', '172.19.0.2', '10.244.2.0/24', 'auto'));
    const noVtep = netNodeOf(node('d', '172.20.0.2', '10.244.3.0/24'));
    expect([pathBetween(a, same), pathBetween(a, far), pathBetween(a, noVtep)]).toEqual(['host-gw', 'vxlan', undefined]);
    expect(pathBetween({ ...a, backend: 'vxlan' }, same)).toBe('vxlan');
    expect(pathBetween({ ...a, backend: 'host-gw' }, far)).toBe('host-gw');
    const plan = planPeers(a, [a, same, far, noVtep]);
    expect(plan.hostGw).toEqual([{ name: 'b', ips: ['172.18.0.3'], podCIDRs: ['10.244.1.0/24'] }]);
    expect(plan.vxlan).toEqual([{ name: 'c', podCIDR: '10.244.2.0/24', vtepIP: '10.244.2.0', mac: '02:76:ac:13:00:02',
      underlayIP: '172.19.0.2' }]);
  });

  it('the lab cloud puts a route into effect only where host-gw works: same segment, host-gw path', () => {
    const nodes = [node('a', '172.18.0.2', '10.244.0.0/24', 'auto'), node('b', '172.18.0.3', '10.244.1.0/24', 'auto'),
      node('c', '172.19.0.2', '10.244.2.0/24', 'auto')].map(netNodeOf);
    const byName = new Map(nodes.map((n) => [n.name, n]));
    const table = nodes.map((n) => ({ targetNode: n.name, destinationCIDR: n.podCIDRs[0]! }));
    expect(labRoutesFor(nodes[0]!, '172.18.0.0/16', byName, table))
      .toEqual([{ name: 'b', ips: ['172.18.0.3'], podCIDRs: ['10.244.1.0/24'] }]);
    expect(labRoutesFor(nodes[2]!, '172.19.0.0/16', byName, table)).toEqual([]);
  });

  it('a VXLAN sync writes the missing FDB, neighbour and route entries and removes stale ones', async () => {
    const exec = buildRecordingExec();
    exec.on((c) => c.args.includes('link'), { stdout: `7: ${VTEP_LINK}: <UP> mtu 1450\n`, stderr: '' });
    exec.on((c) => c.args.includes('route'), { stdout: JSON.stringify([
      { dst: '10.244.9.0/24', gateway: '10.244.9.0' }]), stderr: '' });
    exec.on((c) => c.args.includes('neigh'), { stdout: JSON.stringify([{ dst: '10.244.9.0', lladdr: '02:76:ac:14:00:09' }]), stderr: '' });
    exec.on((c) => c.file === 'bridge' && c.args.includes('show'), { stdout: JSON.stringify([
      { mac: '02:76:ac:14:00:09', dst: '172.20.0.9' }, { mac: '00:00:00:00:00:00' }]), stderr: '' });
    exec.on((c) => c.args.includes('-batch'), { stdout: '', stderr: '' });
    await syncVxlanPeers(exec, 'kdp-x-n1', [{ podCIDR: '10.244.2.0/24', vtepIP: '10.244.2.0', mac: '02:76:ac:13:00:02',
      underlayIP: '172.19.0.2' }]);
    const batches = exec.calls.filter((c) => c.args.includes('-batch'));
    expect(batches.map((c) => [c.file, c.input])).toEqual([
      ['bridge', `fdb del 02:76:ac:14:00:09 dev ${VTEP_LINK} dst 172.20.0.9 self\n` +
        `fdb replace 02:76:ac:13:00:02 dev ${VTEP_LINK} dst 172.19.0.2 self permanent\n`],
      ['ip', `route del 10.244.9.0/24 via 10.244.9.0 dev ${VTEP_LINK}\nneigh del 10.244.9.0 dev ${VTEP_LINK}\n` +
        `neigh replace 10.244.2.0 lladdr 02:76:ac:13:00:02 dev ${VTEP_LINK} nud permanent\n` +
        `route replace 10.244.2.0/24 via 10.244.2.0 dev ${VTEP_LINK} onlink\n`],
    ]);
  });

  it('the tracer reads the same tunnels: outer addresses per VXLAN peer', () => {
    const info = vxlanInfoOf([node('a', '172.18.0.2', '10.244.0.0/24', 'auto'), node('b', '172.18.0.3', '10.244.1.0/24', 'auto'),
      node('c', '172.19.0.2', '10.244.2.0/24', 'auto')]);
    expect([...info.keys()]).toEqual(['a', 'b', 'c']);
    expect([...info.get('a')!.peers]).toEqual([['c', { src: '172.18.0.2', dst: '172.19.0.2' }]]);
    expect(info.get('c')!).toMatchObject({ iface: VTEP_LINK, vni: 1, port: 8472 });
  });
});
