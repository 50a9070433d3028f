// The tracer across simulated hosts (issue 19), offline: three nodes with the auto backend, n1
// and n2 on one segment (172.18.0.0/16), n3 on another host (172.19.0.0/16). Pod to pod on the
// segment crosses as a host-gw hop; to n3 the packet is encapsulated (outer addresses, UDP 8472,
// VNI 1) and decapsulated on n3's VTEP, and the pod still sees the client's own address
// (NAT-free). The hops are compared with golden JSON and text (test/fixtures/trace/multi-host/;
// KDP_UPDATE_GOLDEN=1 rewrites them).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/types.js';
import { renderTrace } from '../../src/cli/render-trace.js';
import { backendAnnotations } from '../../src/cni/backend.js';
import { vtepMac } from '../../src/host/vxlan.js';
import { clusterTraceJson } from '../../src/trace/cluster-json.js';
import { traceResolved } from '../../src/trace/cluster.js';
import { withKdpTables } from '../../src/trace/kdp-masq.js';
import { buildFilter } from '../../src/trace/offline.js';
import { vxlanInfoOf } from '../../src/trace/overlay.js';
import type { Topology } from '../../src/trace/topology.js';

const DIR = fileURLToPath(new URL('../fixtures/trace/multi-host/', import.meta.url));
const EMPTY = '*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\nCOMMIT\n' +
  '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n';

const NODES = [['n1', '172.18.0.2', '10.244.0.0/24', '172.18.0.0/16'], ['n2', '172.18.0.3', '10.244.1.0/24', '172.18.0.0/16'],
  ['n3', '172.19.0.2', '10.244.2.0/24', '172.19.0.0/16']] as const;

function topology(): Topology {
  const nodes = NODES.map(([name, ip, cidr, underlayCIDR]) => ({ apiVersion: 'v1', kind: 'Node',
    metadata: { name, annotations: backendAnnotations({ backend: 'auto', nodeIP: ip, underlayCIDR, vtepMac: vtepMac(ip) }) },
    spec: { podCIDRs: [cidr] }, status: { addresses: [{ type: 'InternalIP', address: ip }] } }) as Node);
  const vxlan = vxlanInfoOf(nodes);
  return {
    nodes: NODES.map(([name, ip, cidr]) => ({ name, nodeIPs: [ip], podCIDRs: [cidr], bridge: 'cni0',
      gatewayIPs: [cidr.replace(/0\/24$/, '1')], underlayIface: 'eth0',
      filter: withKdpTables(buildFilter('iptables', EMPTY), ['10.244.0.0/16']),
      ...(vxlan.has(name) ? { vxlan: vxlan.get(name)! } : {}) })),
    pods: [{ name: 'default/client', ip: '10.244.0.5', node: 'n1', listeners: [] },
      { name: 'default/web-a', ip: '10.244.1.7', node: 'n2', listeners: ['8080/TCP'] },
      { name: 'default/web-b', ip: '10.244.2.9', node: 'n3', listeners: ['8080/TCP'] }],
  };
}

function trace(dstPod: string, dstIP: string) {
  return traceResolved(topology(), { ip: '10.244.0.5', entry: { kind: 'pod', pod: 'default/client', node: 'n1' },
    label: 'pod default/client' }, { ip: dstIP, port: 8080, label: `pod ${dstPod}`, pod: dstPod }, 'tcp');
}

function golden(name: string, text: string): string {
  const file = `${DIR}${name}`;
  if (process.env.KDP_UPDATE_GOLDEN === '1' || !existsSync(file)) {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(file, text);
  }
  return readFileSync(file, 'utf8');
}

describe('tracing across hosts (auto backend)', () => {
  it('pod to a pod on another host: the VXLAN encapsulation is a hop, NAT-free', () => {
    const t = trace('default/web-b', '10.244.2.9');
    expect(t.natFree).toBe(true);
    const hops = t.result.destinations[0]!.hops;
    expect(hops.filter((h) => h.stage === 'vxlan').map((h) => [h.where, h.text])).toEqual([
      ['n1', 'kdp-vxlan-1 → n3: encapsulated in UDP 172.18.0.2 → 172.19.0.2:8472 VNI 1, out of eth0 (vxlan route)'],
      ['n3', 'decapsulated on kdp-vxlan-1 of n3 (VNI 1): inner 10.244.0.5:40000 → 10.244.2.9:8080'],
    ]);
    const json = `${JSON.stringify(clusterTraceJson(t), null, 2)}\n`;
    expect(json).toBe(golden('vxlan.json', json));
    const text = renderTrace(t.result, false);
    expect(text).toBe(golden('vxlan.txt', text));
  });

  it('pod to a pod on the same segment: a host-gw hop, no encapsulation', () => {
    const t = trace('default/web-a', '10.244.1.7');
    expect(t.natFree).toBe(true);
    const hops = t.result.destinations[0]!.hops;
    expect(hops.some((h) => h.stage === 'vxlan')).toBe(false);
    expect(hops.find((h) => h.stage === 'underlay')!.text).toBe('eth0 → n2 (host-gw route)');
    const text = renderTrace(t.result, false);
    expect(text).toBe(golden('host-gw.txt', text));
  });
});
