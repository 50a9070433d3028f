import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/types.js';
import { allocateFromEach, buildCidrSet } from '../../src/controllers/nodeipam/cidr-set.js';
import { parseClusterCIDRs } from '../../src/controllers/nodeipam/cluster-cidrs.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

describe('--cluster-cidr and node mask flags (kube-controller-manager semantics)', () => {
  it('takes one CIDR or a pair of different families, with /24 and /64 masks in flag order', () => {
    expect(parseClusterCIDRs('fd00:10:244::/56,10.244.0.0/16')).toEqual({
      cidrs: ['fd00:10:244::/56', '10.244.0.0/16'], families: ['IPv6', 'IPv4'], nodeMasks: [64, 24],
    });
    expect(parseClusterCIDRs('10.244.0.0/16', { nodeCIDRMaskSize: 26 }).nodeMasks).toEqual([26]);
    expect(parseClusterCIDRs('10.1.0.0/16,fd00::/56', { nodeCIDRMaskSizeIPv6: 60 }).nodeMasks)
      .toEqual([24, 60]);
  });

  it.each([
    ['10.0.0.0/16,10.1.0.0/16', {}, 'len of ClusterCIDRs==2 and they are not configured as dual ' +
      'stack (at least one from each IPFamily'],
    ['10.0.0.0/16,fd00::/56,10.1.0.0/16', {}, 'length of clusterCIDRs is:3 more than max allowed of 2'],
    ['10.0.0.0/16,fd00::/56', { nodeCIDRMaskSize: 24 },
      'usage of --node-cidr-mask-size is not allowed with dual-stack clusters'],
    ['fd00::/56', { nodeCIDRMaskSizeIPv4: 24 },
      'usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster'],
    ['10.0.0.0/16', { nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv4: 24 },
      'usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed if'],
    ['fd00::/40', {}, 'New CIDR set failed; the node CIDR size is too big'],
    ['10.0.0.0/25', {}, 'mask size of cluster CIDR must be less than or equal to --node-cidr-mask-size'],
    ['10.0.0.0/33', {}, 'invalid CIDR address: 10.0.0.0/33'],
  ])('rejects %s %j', (cidr, masks, message) => {
    expect(() => parseClusterCIDRs(cidr, masks)).toThrow(message);
  });
});

describe('a dual-stack node\'s blocks are allocated all or nothing', () => {
  it('gives back the blocks of the earlier families when a later one is exhausted', () => {
    const v4 = buildCidrSet('10.250.0.0/23', 24);
    const v6 = buildCidrSet('fd00:10:244::/64', 64);
    expect(allocateFromEach([v4, v6])).toEqual(['10.250.0.0/24', 'fd00:10:244::/64']);
    expect(() => allocateFromEach([v4, v6])).toThrow(/at idx:1: /);
    expect(v4.used()).toBe(1);
    v6.release('fd00:10:244::/64');
    expect(allocateFromEach([v4, v6])).toEqual(['10.250.1.0/24', 'fd00:10:244::/64']);
  });
});

describe('node IPAM controller, dual stack', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, scheduler: false,
      controllers: { clusterCIDR: 'fd00:10:244::/63,10.250.0.0/16', serviceCIDR: '10.250.0.0/24' } });
  });
  afterAll(async () => { await c?.close(); });

  it('gives each node a block of every cluster CIDR, ordered like the flag, podCIDR the first', async () => {
    for (const n of ['a', 'b']) await c.addNode(n);
    const nodes = await waitFor(async () => {
      const ns = await listItems<Node>(c.client, ref('nodes'));
      return ns.filter((n) => n.spec?.podCIDRs?.length).length === 2 ? ns : undefined;
    });
    expect(Object.fromEntries(nodes.map((n) => [n.metadata.name, [n.spec?.podCIDR, n.spec?.podCIDRs]])))
      .toEqual({
        // 10.250.0.0/24 is the service CIDR: occupied, so IPv4 blocks start at .1.
        a: ['fd00:10:244::/64', ['fd00:10:244::/64', '10.250.1.0/24']],
        b: ['fd00:10:244:1::/64', ['fd00:10:244:1::/64', '10.250.2.0/24']],
      });
  });

  it('gives a node nothing when one family is exhausted, and keeps the other family\'s block free', async () => {
    await c.addNode('c');
    await waitFor(async () => (await listItems(c.client, ref('events', 'default')))
      .some((e) => (e as { reason?: string }).reason === 'CIDRNotAvailable') || undefined);
    const node = await c.client.get<Node>(ref('nodes'), 'c');
    expect(node.spec?.podCIDRs).toBeUndefined();
    await c.client.delete(ref('nodes'), 'a');
    const d = await waitFor(async () => {
      const n = await c.client.get<Node>(ref('nodes'), 'c');
      return n.spec?.podCIDRs ? n : undefined;
    });
    // The IPv6 range (listed first) ran out, so no IPv4 block was taken for c meanwhile; it
    // gets a's IPv6 block and a fresh IPv4 one (all-or-nothing is unit-tested above).
    expect(d.spec?.podCIDRs?.[0]).toBe('fd00:10:244::/64');
    expect(d.spec?.podCIDRs?.[1]).toMatch(/^10\.250\.\d+\.0\/24$/);
  });
});
