import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compareFlow, observeProbe, type ProbeObservation, type SimulatedFlow, simulatedFlow,
} from '../../src/trace/live/compare.js';
import { traceOffline } from '../../src/trace/offline.js';
import { RULES_DIR } from '../helpers/scenarios.js';

const id = { scenario: 's', mode: 'iptables', flow: 'f' };
const ctx = { source: '10.244.0.5', destination: '10.96.0.20:80', nodeSource: false };

function dnat(endpoints: Record<string, boolean>, affinity = false): SimulatedFlow {
  const map = new Map(Object.entries(endpoints));
  return { verdict: 'DNAT', endpoints: map, masquerade: false, affinity };
}
const hit = (endpoint: string, masquerade = false): ProbeObservation =>
  ({ verdict: 'DNAT', endpoint, masquerade });

describe('live observation of one probe', () => {
  it('a reply from another address is DNAT to it, with the source the server saw', () => {
    const o = observeProbe({ outcome: 'reply', responder: 'eps', servedBy: '10.244.0.7:8080',
      seenSource: '172.18.0.2:40000', rttMs: 1 }, ctx);
    expect(o).toEqual({
      verdict: 'DNAT', endpoint: '10.244.0.7:8080', masquerade: true, responder: 'eps',
    });
  });

  it('a reply at the original destination is ACCEPT from the node and NONE from the world', () => {
    const base = {
      outcome: 'reply' as const, servedBy: '10.96.0.20:80', seenSource: '10.244.0.5:1', rttMs: 1,
    };
    expect(observeProbe({ ...base, responder: 'node' }, ctx).verdict).toBe('ACCEPT');
    expect(observeProbe({ ...base, responder: 'world' }, ctx).verdict).toBe('NONE');
  });

  it('refused and unreachable are REJECT, a timeout is DROP', () => {
    expect(observeProbe({ outcome: 'refused', rttMs: 1 }, ctx).verdict).toBe('REJECT');
    expect(observeProbe({ outcome: 'unreachable', rttMs: 1 }, ctx).verdict).toBe('REJECT');
    expect(observeProbe({ outcome: 'timeout', rttMs: 1 }, ctx).verdict).toBe('DROP');
  });

  it('a node source seen unchanged leaves masquerade unknown (masqueraded to itself?)', () => {
    const o = observeProbe({ outcome: 'reply', responder: 'world', servedBy: '10.244.1.5:8080',
      seenSource: '172.18.0.2:5', rttMs: 1 }, { ...ctx, source: '172.18.0.2', nodeSource: true });
    expect(o.masquerade).toBeUndefined();
  });
});

describe('live comparison of a flow', () => {
  it('agreeing probes give no disagreement', () => {
    const sim = dnat({ 'a:1': false, 'b:1': true });
    expect(compareFlow(id, sim, [hit('a:1'), hit('b:1', true), hit('a:1')])).toEqual([]);
  });

  it('an endpoint outside the simulated set and one never reached are both reported', () => {
    const out = compareFlow(id, dnat({ 'a:1': false, 'b:1': false }), [hit('a:1'), hit('c:1')]);
    expect(out.map((d) => [d.field, d.observed])).toEqual([
      ['endpoints', 'outside the set: c:1'],
      ['endpoints', 'never reached in 2 probes: b:1'],
    ]);
  });

  it('a masquerade on a branch the simulation keeps unmasqueraded is reported', () => {
    const sim = dnat({ 'a:1': false, 'b:1': true });
    const out = compareFlow(id, sim, [hit('a:1', true), hit('b:1', true)]);
    expect(out).toEqual([
      { ...id, field: 'masquerade', simulated: 'false', observed: 'true (1/2 probes)' },
    ]);
  });

  it('a verdict other than the simulated one is reported with the observed counts', () => {
    const sim: SimulatedFlow = {
      verdict: 'REJECT', endpoints: new Map(), masquerade: false, affinity: false,
    };
    const out = compareFlow(id, sim, [{ verdict: 'NONE', masquerade: false }]);
    expect(out).toEqual([{ ...id, field: 'verdict', simulated: 'REJECT', observed: 'NONE×1' }]);
  });

  it('with affinity one endpoint is expected, and several are reported', () => {
    const sim = dnat({ 'a:1': false, 'b:1': false }, true);
    expect(compareFlow(id, sim, [hit('a:1'), hit('a:1')])).toEqual([]);
    const two = compareFlow(id, sim, [hit('a:1'), hit('b:1')]);
    expect(two.map((d) => d.field)).toEqual(['affinity']);
  });

  it('over more than four endpoints only the subset is required', () => {
    const sim = dnat(Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((e) => [`${e}:1`, false])));
    expect(compareFlow(id, sim, [hit('a:1')])).toEqual([]);
  });
});

describe('simulated flow from a trace', () => {
  const rules = readFileSync(`${RULES_DIR}/01-clusterip/iptables.golden`, 'utf8');
  const trace = (src: string, dport: number) => traceOffline({
    rules, mode: 'iptables', nodeIPs: ['172.18.0.2'], podCIDRs: ['10.244.0.0/24'], src,
    dst: '10.96.0.20', dport, proto: 'tcp',
  });

  it('a service hit is DNAT over its endpoints with the hairpin branch masqueraded', () => {
    const sim = simulatedFlow(trace('10.244.1.5', 80), '10.96.0.20:80');
    expect(sim.verdict).toBe('DNAT');
    expect([...sim.endpoints]).toEqual(expect.arrayContaining([
      ['10.244.0.7:8080', false], ['10.244.1.5:8080', true],
    ]));
    expect(sim.affinity).toBe(false);
  });

  it('an untouched packet is NONE', () => {
    expect(simulatedFlow(trace('10.244.0.5', 81), '10.96.0.20:81').verdict).toBe('NONE');
  });
});
