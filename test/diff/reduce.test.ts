import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '../../src/api/types.js';
import { reduceIptablesPair } from '../../src/diff/iptables-reduce.js';
import { parseSide } from '../../src/diff/load.js';
import { changeLine, semanticDiff } from '../../src/diff/semantic.js';
import { byName, compileScenario } from './helpers.js';

const side = (text: string) => parseSide({ label: 'x', text, format: 'iptables' }).facts;
const full = (a: string, b: string) => semanticDiff(side(a), side(b)).map(changeLine);
const reduced = (a: string, b: string) => {
  const [ra, rb] = reduceIptablesPair(a, b)!;
  return semanticDiff(side(ra), side(rb)).map(changeLine);
};

describe('the reduced semantic diff of two iptables dumps', () => {
  it('parses much less and says exactly what the whole-table diff says', async () => {
    const a = await compileScenario('07-etp-local-with-local', 'iptables');
    const b = await compileScenario('07-etp-local-with-local', 'iptables', (objs) => {
      byName<Service>(objs, 'Service', 'checkout').spec!.externalTrafficPolicy = 'Cluster';
      const slice = objs.find((o) => o.kind === 'EndpointSlice') as EndpointSlice;
      slice.endpoints.push({ addresses: ['10.244.0.99'], nodeName: 'node-a', conditions: { ready: true } });
      return objs;
    });
    const [ra] = reduceIptablesPair(a, b)!;
    expect(ra.length).toBeLessThan(a.length);
    const lines = full(a, b);
    expect(lines.length).toBeGreaterThan(3);
    expect(reduced(a, b)).toEqual(lines);
  });

  it('agrees over every step of 17-partial-sync', async () => {
    const steps = [undefined, '1-add', '2-scale', '3-delete'];
    const tables = await Promise.all(steps.map((s) =>
      compileScenario('17-partial-sync', 'iptables', undefined, s)));
    for (let i = 0; i + 1 < tables.length; i++) {
      expect(reduced(tables[i]!, tables[i + 1]!)).toEqual(full(tables[i]!, tables[i + 1]!));
    }
  });
});
