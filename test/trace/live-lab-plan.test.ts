import { describe, expect, it } from 'vitest';
import { firstAddress, inCIDR, planLab, senderRole } from '../../src/trace/live/lab-plan.js';

const plan = planLab({
  prefix: 'kdp-t-abcdef', nodeIPs: ['172.18.0.2'], podCIDRs: ['10.244.0.0/24'],
  sources: ['10.244.0.5', '172.18.0.2', '203.0.113.9', '127.0.0.1', '10.244.0.7'],
  targets: [
    { protocol: 'tcp', ip: '10.96.0.20', port: 80 },
    { protocol: 'tcp', ip: '10.244.0.7', port: 8080 },
    { protocol: 'tcp', ip: '10.244.0.9', port: 8080 },
    { protocol: 'udp', ip: '10.244.1.5', port: 53 },
    { protocol: 'udp', ip: '172.18.0.2', port: 30053 },
  ],
});

describe('live lab plan', () => {
  it('gives each sending pod its own namespace and groups endpoint-only pods', () => {
    expect(plan.pods).toEqual([
      { role: 'p0', netns: 'kdp-t-abcdef-p0', ips: ['10.244.0.5'] },
      { role: 'p1', netns: 'kdp-t-abcdef-p1', ips: ['10.244.0.7'] },
      { role: 'eps', netns: 'kdp-t-abcdef-eps', ips: ['10.244.0.9'] },
    ]);
  });

  it('leaves every address that is neither the node nor a local pod to the world', () => {
    expect(plan.worldAddresses).toEqual(['10.244.1.5', '10.96.0.20']);
    expect([plan.tcpPorts, plan.udpPorts]).toEqual([[80, 8080], [53, 30053]]);
  });

  it('sends node and loopback sources from the node, strangers from the world', () => {
    expect(['172.18.0.2', '127.0.0.1', '10.244.0.1', '10.244.0.7', '198.51.100.1']
      .map((s) => senderRole(plan, s))).toEqual(['node', 'node', 'node', 'p1', 'world']);
  });

  it('computes gateways and containment for both families', () => {
    expect([firstAddress('10.244.0.0/24'), firstAddress('fd00:10:244::/64')])
      .toEqual(['10.244.0.1', 'fd00:10:244::1']);
    expect([inCIDR('fd00:10:244::9', 'fd00:10:244::/64'), inCIDR('10.244.1.5', '10.244.0.0/24'),
      inCIDR('10.0.0.1', 'fd00::/8')]).toEqual([true, false, false]);
  });
});
