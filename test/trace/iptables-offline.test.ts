import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { traceOffline } from '../../src/trace/offline.js';
import { isKdpError } from '../../src/errors.js';

const nodeport = readFileSync(new URL('../../rules/04-nodeport/iptables.golden', import.meta.url), 'utf8');

function trace(src: string, dst: string, dport: number, rules = nodeport) {
  return traceOffline({ rules, mode: 'iptables', nodeIPs: ['172.18.0.2'], src, dst, dport, proto: 'tcp' });
}

describe('iptables tracer over a compiled table', () => {
  it('a pod reaching a ClusterIP is DNATed to each endpoint with equal probability, no masquerade', () => {
    const r = trace('10.244.0.5', '10.96.4.40', 8080);
    expect(r.verdict).toBe('ACCEPT');
    expect(r.destinations.map((d) => [d.destination, d.probability, d.masquerade])).toEqual([
      ['10.244.0.11:8080', 0.5, false],
      ['10.244.2.11:8080', 0.5, false],
    ]);
    expect(r.masquerade).toBe(false);
  });

  it('an outside client on the NodePort is masqueraded to the node IP', () => {
    const r = trace('192.0.2.10', '172.18.0.2', 30080);
    expect(r.destinations.map((d) => [d.destination, d.masquerade, d.sourceSeen])).toEqual([
      ['10.244.0.11:8080', true, '172.18.0.2'],
      ['10.244.2.11:8080', true, '172.18.0.2'],
    ]);
  });

  it('a source outside the cluster CIDR reaching the ClusterIP is masqueraded', () => {
    const r = trace('192.0.2.10', '10.96.4.40', 8080);
    expect(r.masquerade).toBe(true);
  });

  it('traffic to an address no Service owns passes untouched', () => {
    const r = trace('10.244.0.5', '10.244.2.11', 8080);
    expect(r.destinations).toHaveLength(1);
    expect(r.destinations[0]).toMatchObject({ destination: '10.244.2.11:8080', masquerade: false, probability: 1 });
  });

  it('labels the matched rules with their Service', () => {
    const r = trace('10.244.0.5', '10.96.4.40', 8080);
    const svcHop = r.hops.find((h) => h.chain?.startsWith('KUBE-SVC-'));
    expect(svcHop?.origin?.servicePort).toBe('default/echo:http');
    expect(r.hops.some((h) => h.nat?.startsWith('DNAT 10.96.4.40:8080 →'))).toBe(true);
  });

  it('a rule with an option the tracer does not model is an error naming the rule', () => {
    const rules = '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -m foo --bar 1 -j ACCEPT\nCOMMIT\n';
    const err = (() => { try { trace('10.0.0.1', '10.0.0.2', 80, rules); } catch (e) { return e; } })();
    expect(isKdpError(err, 'KDP_TRACE')).toBe(true);
    expect((err as Error).message).toContain('-A PREROUTING -m foo --bar 1 -j ACCEPT');
  });
});
