import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, Node } from '../../src/api/types.js';
import { buildCidrSet } from '../../src/controllers/nodeipam/cidr-set.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

describe('node CIDR set', () => {
  it('hands out blocks from index 0 round-robin and reuses a released one only after wrapping', () => {
    const s = buildCidrSet('10.244.0.0/22', 24);
    expect([s.allocateNext(), s.allocateNext(), s.allocateNext()])
      .toEqual(['10.244.0.0/24', '10.244.1.0/24', '10.244.2.0/24']);
    s.release('10.244.1.0/24');
    expect(s.allocateNext()).toBe('10.244.3.0/24');
    expect(s.allocateNext()).toBe('10.244.1.0/24');
    expect(() => s.allocateNext()).toThrow('CIDR allocation failed; there are no remaining CIDRs ' +
      'left to allocate in the accepted range');
  });

  it('occupies every block a larger CIDR covers and rejects CIDRs outside the range', () => {
    const s = buildCidrSet('10.244.0.0/16', 24);
    s.occupy('10.244.0.0/23');
    expect(s.used()).toBe(2);
    expect(s.allocateNext()).toBe('10.244.2.0/24');
    expect(() => s.occupy('10.0.0.0/24')).toThrow('is out the range of cluster cidr');
  });
});

describe('node IPAM controller', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, scheduler: false,
      controllers: { clusterCIDR: '10.250.0.0/23', nodeCIDRMaskSize: 24 } });
  });
  afterAll(async () => { await c?.close(); });

  it('leaves a node without podCIDR and records CIDRNotAvailable when the range is exhausted', async () => {
    for (const n of ['a', 'b', 'c']) await c.addNode(n);
    const nodes = await waitFor(async () => {
      const ns = await listItems<Node>(c.client, ref('nodes'));
      return ns.filter((n) => n.spec?.podCIDR).length === 2 ? ns : undefined;
    });
    expect(Object.fromEntries(nodes.map((n) => [n.metadata.name, n.spec?.podCIDR ?? null])))
      .toEqual({ a: '10.250.0.0/24', b: '10.250.1.0/24', c: null });
    const ev = await waitFor(async () => (await listItems<Event>(c.client, ref('events', 'default')))
      .find((e) => e.reason === 'CIDRNotAvailable'));
    expect(ev.involvedObject).toMatchObject({ kind: 'Node', name: 'c' });
    expect(ev.message).toBe('Node c status is now: CIDRNotAvailable');
  });
});
