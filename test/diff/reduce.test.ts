import { describe, expect, it } from 'vitest';
import type { EndpointSlice, KubeObject, Service } from '../../src/api/types.js';
import { parseSide } from '../../src/diff/load.js';
import { reducePair } from '../../src/diff/reduce.js';
import { changeLine, semanticDiff } from '../../src/diff/semantic.js';
import { differingRegions } from '../../src/diff/text-align.js';
import type { DiffFormat } from '../../src/diff/types.js';
import { byName, compileScenario } from './helpers.js';

const MODES = ['iptables', 'nftables', 'ipvs'] as const;

const side = (text: string, format: DiffFormat) => parseSide({ label: 'x', text, format }).facts;
const full = (a: string, b: string, f: DiffFormat) =>
  semanticDiff(side(a, f), side(b, f)).map(changeLine);
const reduced = (a: string, b: string, f: DiffFormat) => {
  const [ra, rb] = reducePair(f, a, b)!;
  return semanticDiff(side(ra, f), side(rb, f)).map(changeLine);
};

/** Several edits at once: eTP, a new endpoint, a NodePort, a source range. */
function edits(objs: KubeObject[]): KubeObject[] {
  byName<Service>(objs, 'Service', 'checkout').spec!.externalTrafficPolicy = 'Cluster';
  const slice = objs.find((o) => o.kind === 'EndpointSlice') as EndpointSlice;
  slice.endpoints.push({ addresses: ['10.244.0.99'], nodeName: 'node-a',
    conditions: { ready: true } });
  return objs;
}

describe.each(MODES)('the reduced semantic diff of two %s dumps', (mode) => {
  it('parses much less and says exactly what the whole-table diff says', async () => {
    const a = await compileScenario('07-etp-local-with-local', mode);
    const b = await compileScenario('07-etp-local-with-local', mode, edits);
    const [ra] = reducePair(mode, a, b)!;
    expect(ra.length).toBeLessThan(a.length);
    const lines = full(a, b, mode);
    expect(lines.length).toBeGreaterThan(1);
    expect(reduced(a, b, mode)).toEqual(lines);
  });

  it('agrees over every step of 17-partial-sync', async () => {
    const steps = [undefined, '1-add', '2-scale', '3-delete'];
    const tables = await Promise.all(steps.map((s) =>
      compileScenario('17-partial-sync', mode, undefined, s)));
    for (let i = 0; i + 1 < tables.length; i++) {
      expect(reduced(tables[i]!, tables[i + 1]!, mode)).toEqual(
        full(tables[i]!, tables[i + 1]!, mode));
    }
  });

  it('agrees when a NodePort changes and a source range is added', async () => {
    const a = await compileScenario('05-loadbalancer-source-ranges', mode);
    const b = await compileScenario('05-loadbalancer-source-ranges', mode, (objs) => {
      const svc = byName<Service>(objs, 'Service', 'front');
      svc.spec!.loadBalancerSourceRanges!.push('192.0.2.0/24');
      svc.spec!.ports![0]!.nodePort = 31999;
      return objs;
    });
    const lines = full(a, b, mode);
    expect(lines.length).toBeGreaterThan(0);
    expect(reduced(a, b, mode)).toEqual(lines);
  });
});

describe('differing regions of two texts', () => {
  it('are the changed stretches of lines, on both sides', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `line ${i}`);
    const b = [...a];
    b.splice(1000, 2, 'new 1');
    b.splice(2500, 0, 'new 2', 'new 3');
    const ta = `${a.join('\n')}\n`;
    const tb = `${b.join('\n')}\n`;
    const r = differingRegions(ta, tb)!;
    expect(r.map((x) => [ta.slice(...x.a), tb.slice(...x.b)])).toEqual([
      ['line 1000\nline 1001\n', 'new 1\n'], ['', 'new 2\nnew 3\n'],
    ]);
    expect(differingRegions(ta, ta)).toEqual([]);
  });

  it('give up (undefined) when the sides do not realign within the window', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `line ${i}`);
    const ta = `${a.join('\n')}\n`;
    const tb = `${[...a].reverse().join('\n')}\n`;
    expect(differingRegions(ta, tb)).toBeUndefined();
  });
});
