import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildFilter, type TraceMode } from '../../src/trace/offline.js';
import { foldArrivals, type TraceResult } from '../../src/trace/result.js';
import type { Topology } from '../../src/trace/topology.js';
import { walk, type Arrival } from '../../src/trace/walk.js';
import { newWorld } from '../../src/trace/world.js';

const pkt = { src: '10.244.0.5', dst: '10.96.4.40', proto: 'tcp' as const, sport: 40000, dport: 8080 };

function arrivalTo(dst: string, probability: number): Arrival {
  const w = newWorld({ ...pkt, dst, dport: 80 });
  w.probability = probability;
  return { world: w, reached: 'external' };
}

function outcome(r: TraceResult) {
  return { verdict: r.verdict, masquerade: r.masquerade,
    destinations: r.destinations.map((d) => [d.destination, d.probability, d.masquerade, d.sourceSeen, d.reached]) };
}

describe('bulk tracing', () => {
  it('lists destinations of equal probability in the order of String.prototype.localeCompare', () => {
    const dsts = ['10.244.1.10', '10.244.1.2', '10.244.10.1', '9.1.1.1', '10.244.1.20', 'fd00::1', 'fd00::a', '10.0.0.1'];
    const r = foldArrivals(pkt, dsts.map((d) => arrivalTo(d, 0.125)));
    const got = r.destinations.map((d) => d.destination);
    const expected = dsts.map((d) => (d.includes(':') ? `[${d}]:80` : `${d}:80`))
      .sort((a, b) => a.localeCompare(b));
    expect(got).toEqual(expected);
  });

  for (const mode of ['iptables', 'nftables', 'ipvs'] as TraceMode[]) {
    it(`${mode}: a trace without hops reaches what the same trace with hops reaches, again and again`, () => {
      const rules = readFileSync(new URL(`../../rules/04-nodeport/${mode}.golden`, import.meta.url), 'utf8');
      const filter = buildFilter(mode, rules);
      const topo: Topology = { nodes: [{ name: 'node', nodeIPs: ['172.18.0.2'], podCIDRs: ['10.244.0.0/24'],
        bridge: 'cni0', gatewayIPs: ['10.244.0.1'], underlayIface: 'eth0', filter }], pods: [] };
      // 10.244.0.11 is one of the Service's endpoints: its own trace takes the hairpin path.
      for (const p of [pkt, { ...pkt, src: '192.0.2.10' }, { ...pkt, src: '10.244.0.11' },
        { ...pkt, src: '192.0.2.10', dst: '172.18.0.2', dport: 30080 }]) {
        const entry = { kind: 'external', node: 'node' } as const;
        const full = outcome(foldArrivals(p, walk(topo, entry, p, true)));
        expect(full.destinations.length).toBeGreaterThan(1);
        for (let i = 0; i < 3; i++) expect(outcome(foldArrivals(p, walk(topo, entry, p, false)))).toEqual(full);
      }
    });
  }
});
