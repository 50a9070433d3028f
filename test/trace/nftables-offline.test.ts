import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { traceOffline } from '../../src/trace/offline.js';
import type { TraceProtocol } from '../../src/trace/packet.js';

const clusterIP = readFileSync(new URL('../../rules/01-clusterip/nftables.golden', import.meta.url), 'utf8');

/** An `ip t` table from rule lines written without the `add rule ip t` prefix's family/table. */
function table(lines: readonly string[]): string {
  const scoped = lines.map((l) => l.replace(/^add (chain|rule|set|map|element) /, 'add $1 ip t '));
  return ['add table ip t', ...scoped].join('\n') + '\n';
}

function trace(rules: string, src: string, dst: string, dport = 80, proto: TraceProtocol = 'tcp') {
  return traceOffline({ rules, mode: 'nftables', nodeIPs: ['172.18.0.2'], src, dst, dport, proto });
}

const summary = (r: ReturnType<typeof trace>) =>
  r.destinations.map((d) => [d.destination, d.probability, d.verdict, d.masquerade]);

describe('nftables tracer over a compiled table', () => {
  it('a pod reaching a ClusterIP goes to each endpoint chain with equal probability', () => {
    const r = trace(clusterIP, '10.244.0.5', '10.96.0.20');
    expect(summary(r)).toEqual([
      ['10.244.0.7:8080', 0.5, 'ACCEPT', false],
      ['10.244.1.5:8080', 0.5, 'ACCEPT', false],
    ]);
    const dnat = r.hops.find((h) => h.nat?.startsWith('DNAT'));
    expect(dnat?.nat).toBe(`DNAT 10.96.0.20:80 → ${r.destinations[0]!.destination}`);
    expect(dnat?.origin).toEqual({ servicePort: 'shop/web:http', endpoint: r.destinations[0]!.destination });
    // Every matched rule is a hop: the services map, the service's numgen map, the endpoint.
    expect(r.hops.filter((h) => h.stage === 'ip kube-proxy services')).toHaveLength(1);
    expect(r.hops.some((h) => h.chain?.startsWith('service-') && h.text.includes('numgen random mod 2'))).toBe(true);
  });

  it('an endpoint reaching itself through the service is masqueraded on that branch only', () => {
    const r = trace(clusterIP, '10.244.1.5', '10.96.0.20');
    expect(summary(r)).toEqual([
      ['10.244.0.7:8080', 0.5, 'ACCEPT', false],
      ['10.244.1.5:8080', 0.5, 'ACCEPT', true],
    ]);
    expect(r.masquerade).toBe(true);
  });

  it('a statement the tracer does not model is an error naming the rule', () => {
    const rules = table(['add chain c { type filter hook forward priority 0 ; }', 'add rule c ip saddr 10.0.0.1 log']);
    const err = (() => { try { trace(rules, '10.0.0.1', '10.0.0.2'); } catch (e) { return e; } })();
    expect(isKdpError(err, 'KDP_TRACE')).toBe(true);
    expect((err as Error).message).toContain('chain c: ip saddr 10.0.0.1 log');
  });

  it('a malformed address in a set is an error once a packet is tested against it', () => {
    const rules = table(['add chain c { type filter hook forward priority 0 ; }',
      'add rule c ip daddr { 10.0.0.0/99 } drop']);
    expect(() => trace(rules, '10.0.0.1', '10.1.0.2')).toThrow(/10\.0\.0\.0\/99/);
  });

  it('numgen branches that jump return to the rule after, and what no element covers falls through', () => {
    const rules = table([
      'add chain pre { type nat hook prerouting priority -100 ; }',
      'add chain a', 'add chain b',
      'add rule pre ip daddr 10.96.0.1 numgen random mod 4 vmap { 0 : jump a , 1 : goto b , 2 : drop }',
      'add rule pre ip daddr 10.96.0.1 dnat to 10.244.0.9:80',
      'add rule a mark set 0x1',
      'add rule b dnat to 10.244.0.8:8080',
    ]);
    const r = trace(rules, '192.0.2.1', '10.96.0.1');
    expect(summary(r)).toEqual([
      // a (returns) and the uncovered quarter both reach the next rule.
      ['10.244.0.9:80', 0.5, 'ACCEPT', false],
      ['10.244.0.8:8080', 0.25, 'ACCEPT', false],
      ['10.96.0.1:80', 0.25, 'DROP', false],
    ]);
    expect(r.verdict).toBe('DROP');
  });

  it('a base chain with policy drop drops what returns from it, with a hop saying so', () => {
    const rules = table([
      'add chain fwd { type filter hook forward priority 0 ; policy drop ; }',
      'add chain c',
      'add rule fwd jump c',
      'add rule fwd tcp dport 443 accept',
      'add rule c tcp dport 80 return',
      'add rule c tcp dport 81 accept',
    ]);
    expect(trace(rules, '192.0.2.1', '10.244.0.9', 81).verdict).toBe('ACCEPT');
    expect(trace(rules, '192.0.2.1', '10.244.0.9', 443).verdict).toBe('ACCEPT');
    const r = trace(rules, '192.0.2.1', '10.244.0.9', 80);
    expect(r.verdict).toBe('DROP');
    expect(r.hops.at(-1)).toMatchObject({ stage: 'ip t fwd', text: 'policy drop' });
  });

  it('a continue statement records its rule and goes on with the statements after it', () => {
    const rules = table([
      'add chain fwd { type filter hook forward priority 0 ; }',
      'add rule fwd ip saddr 192.0.2.1 continue mark set 0x80000000',
      'add rule fwd mark and 0x80000000 == 0x80000000 drop',
    ]);
    const r = trace(rules, '192.0.2.1', '10.244.0.9');
    expect(r.verdict).toBe('DROP');
    const texts = r.hops.filter((h) => h.chain === 'fwd').map((h) => h.text);
    expect(texts).toEqual([
      'ip saddr 192.0.2.1 continue mark set 0x80000000',
      'ip saddr 192.0.2.1 continue mark set 0x80000000',
      'mark and 0x80000000 == 0x80000000 drop',
    ]);
    expect(trace(rules, '192.0.2.2', '10.244.0.9').verdict).toBe('ACCEPT');
  });

  it('a verdict map finds exact keys first and interval elements otherwise', () => {
    const rules = table([
      'add chain pre { type filter hook prerouting priority 0 ; }',
      'add chain x',
      'add map m { type ipv4_addr . inet_service : verdict ; flags interval ; }',
      'add element m { 10.96.0.1 . 80 : accept , 10.96.0.0/16 . 80-90 : goto x }',
      'add rule pre ip daddr . th dport vmap @m',
      'add rule x reject',
    ]);
    expect(trace(rules, '192.0.2.1', '10.96.0.1', 80).verdict).toBe('ACCEPT');
    expect(trace(rules, '192.0.2.1', '10.96.0.1', 85).verdict).toBe('REJECT');
    expect(trace(rules, '192.0.2.1', '10.96.7.7', 90).verdict).toBe('REJECT');
    expect(trace(rules, '192.0.2.1', '10.96.7.7', 91).verdict).toBe('ACCEPT');
  });

  it('a verdict map jump returns to the rule after the map; a goto does not', () => {
    const rules = table([
      'add chain pre { type nat hook prerouting priority -100 ; }',
      'add chain j', 'add chain g',
      'add map m { type ipv4_addr . inet_proto . inet_service : verdict ; }',
      'add element m { 10.96.0.1 . tcp . 80 : jump j , 10.96.0.2 . tcp . 80 : goto g }',
      'add rule pre ip daddr . meta l4proto . th dport vmap @m',
      'add rule pre mark 0x1 dnat to 10.244.0.9:8080',
      'add rule j mark set 0x1',
      'add rule g mark set 0x1',
    ]);
    expect(summary(trace(rules, '192.0.2.1', '10.96.0.1'))).toEqual([['10.244.0.9:8080', 1, 'ACCEPT', false]]);
    expect(summary(trace(rules, '192.0.2.1', '10.96.0.2'))).toEqual([['10.96.0.2:80', 1, 'ACCEPT', false]]);
  });

  it('a jump to a missing chain returns, and a chain jumping to itself stops at the depth limit', () => {
    const rules = table([
      'add chain fwd { type filter hook forward priority 0 ; policy drop ; }',
      'add chain loop',
      'add rule fwd tcp dport 80 jump nowhere',
      'add rule fwd tcp dport 80 accept',
      'add rule fwd tcp dport 81 jump loop',
      'add rule fwd tcp dport 81 accept',
      'add rule loop jump loop',
    ]);
    expect(trace(rules, '192.0.2.1', '10.244.0.9', 80).verdict).toBe('ACCEPT');
    expect(trace(rules, '192.0.2.1', '10.244.0.9', 81).verdict).toBe('ACCEPT');
  });
});
