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

  // Issue 22: iptables-save prints kube-proxy's `--xor-mark 0x4000` as `--set-xmark 0x4000/0x0`;
  // the kernel computes (mark & ~mask) ^ value, so it clears the bit (the tracer OR-ed it back).
  it('MARK --set-xmark V/0x0 toggles the bit as the kernel does (xt_MARK)', () => {
    const rules = [
      '*nat', ':PREROUTING ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]',
      '-A PREROUTING -j MARK --set-xmark 0x4000/0x4000',
      '-A PREROUTING -j MARK --set-xmark 0x4000/0x0',
      '-A POSTROUTING -m mark --mark 0x4000/0x4000 -j MASQUERADE', 'COMMIT',
      '*filter', ':FORWARD ACCEPT [0:0]', '-A FORWARD -m mark --mark 0x4000/0x4000 -j DROP',
      '-A FORWARD -j MARK --set-mark 0x1/0x1', '-A FORWARD -m mark --mark 0x1/0x1 -j ACCEPT',
      '-A FORWARD -j DROP', 'COMMIT', '',
    ].join('\n');
    const r = trace('192.0.2.10', '10.244.2.11', 8080, rules);
    expect(r.verdict).toBe('ACCEPT');
    expect(r.masquerade).toBe(false);
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
  it('negated address, port, protocol and mark matches decide as their plain forms inverted', () => {
    const rules = ['*filter', ':FORWARD ACCEPT [0:0]',
      '-A FORWARD ! -s 10.244.0.5 -j ACCEPT',
      '-A FORWARD -p tcp ! --dport 80:90 -j ACCEPT',
      '-A FORWARD ! -p tcp -j ACCEPT',
      '-A FORWARD -m mark ! --mark 0x0/0x4000 -j ACCEPT',
      '-A FORWARD -m conntrack ! --ctstate DNAT -d 10.96.0.1 -j REJECT',
      '-A FORWARD -j DROP', 'COMMIT', ''].join('\n');
    // Passes every ACCEPT rule's negation, then hits the REJECT (no DNAT, destination matches).
    expect(trace('10.244.0.5', '10.96.0.1', 85, rules).verdict).toBe('REJECT');
    expect(trace('10.244.0.5', '10.96.0.2', 85, rules).verdict).toBe('DROP');
    expect(trace('10.244.0.6', '10.96.0.1', 85, rules).verdict).toBe('ACCEPT');
    expect(trace('10.244.0.5', '10.96.0.1', 91, rules).verdict).toBe('ACCEPT');
  });

  it('an ipset match the tracer cannot decide is an error even when a later match fails', () => {
    const rules = ['*filter', ':FORWARD ACCEPT [0:0]',
      '-A FORWARD -m set --match-set KUBE-CLUSTER-IP dst,dst -p udp -j DROP', 'COMMIT', ''].join('\n');
    const err = (() => { try { trace('10.0.0.1', '10.0.0.2', 80, rules); } catch (e) { return e; } })();
    expect(isKdpError(err, 'KDP_TRACE')).toBe(true);
    expect((err as Error).message).toContain('KUBE-CLUSTER-IP');
  });
});
