// The knftables-style transaction text: every line kube-proxy writes parses and formats back
// to the same bytes, and a line that does not parse names its line number and the reason.

import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { sortTransactionText } from '../../src/ruleset/nftables/canonical.js';
import { formatTransaction, parseTransaction } from '../../src/ruleset/nftables/transaction.js';

const LINES = [
  'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
  'add table ip6 kube-proxy',
  'delete table ip kube-proxy',
  'add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }',
  'add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }',
  'add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }',
  'add chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80',
  'flush chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80',
  'delete chain ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
  'add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }',
  'add set ip kube-proxy affinity-X { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }',
  'add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }',
  'flush map ip kube-proxy service-ips',
  'delete set ip kube-proxy nodeport-ips',
  'add rule ip kube-proxy filter-input ct state new jump nodeport-endpoints-check',
  'add rule ip kube-proxy masquerading mark and 0x00004000 == 0 return',
  'add rule ip kube-proxy cluster-ips-check ip daddr { 10.96.0.0/12,fd00::/112 } drop comment "Drop traffic to unallocated ClusterIPs"',
  'add rule ip kube-proxy s numgen random mod 2 vmap { 0 : goto endpoint-a , 1 : goto endpoint-b }',
  'add rule ip kube-proxy e update @affinity-a { ip saddr }',
  'add rule ip kube-proxy x ip saddr 10.0.0.0/8 goto s comment "short-circuit pod traffic"',
  'add rule ip kube-proxy x iifname != "veth*" drop comment "a \\"quoted\\" word"',
  'add element ip kube-proxy cluster-ips { 172.30.0.41 }',
  'add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }',
  'add element ip kube-proxy no-endpoint-services { 172.30.0.46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain }',
  'add element ip6 kube-proxy service-ips { fd00:10:96::20 . tcp . 80 : goto service-XLOBWYCZ-shop/web6/tcp/http }',
  'delete element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 }',
  'delete element ip6 kube-proxy no-endpoint-nodeports { udp . 30053 }',
];

describe('nftables transaction text', () => {
  it('formats every kube-proxy line back to the same bytes', () => {
    const text = LINES.join('\n') + '\n';
    expect(formatTransaction(parseTransaction(text))).toBe(text);
  });

  it('splits an element into key parts, comment and verdict', () => {
    const [op] = parseTransaction(LINES[23]!);
    expect(op).toMatchObject({ object: 'element', set: 'no-endpoint-services',
      elements: [{ key: ['172.30.0.46', 'tcp', '80'], comment: 'ns6/svc6:p80',
        value: ['goto reject-chain'] }] });
  });

  it('keeps IPv6 keys whole although they contain colons', () => {
    const [op] = parseTransaction(LINES[24]!);
    expect(op).toMatchObject({ elements: [{ key: ['fd00:10:96::20', 'tcp', '80'] }] });
  });

  it('reads a base chain with its numeric priority', () => {
    const [op] = parseTransaction(LINES[3]!);
    expect(op).toMatchObject({ object: 'chain', chain: { name: 'filter-prerouting-pre-dnat',
      type: 'filter', hook: 'prerouting', priority: -110 } });
  });

  it('skips blank and # lines', () => {
    expect(parseTransaction('# header\n\n' + LINES[0] + '\n')).toHaveLength(1);
  });

  it('names the line number and reason of a line that does not parse', () => {
    const text = `${LINES[0]}\n# comment\nadd chian ip kube-proxy x\n`;
    try {
      parseTransaction(text);
      expect.unreachable();
    } catch (e) {
      expect(isKdpError(e, 'KDP_PARSE')).toBe(true);
      expect((e as Error).message).toContain('line 3');
      expect((e as Error).message).toContain('unknown object type "chian"');
    }
  });

  it('parses newline-ended pieces as their joined text, numbering lines across them', () => {
    const pieces = [`${LINES.slice(0, 10).join('\n')}\n`, '\n', `${LINES.slice(10).join('\n')}\n`];
    expect(parseTransaction(pieces)).toEqual(parseTransaction(pieces.join('')));
    expect(() => parseTransaction([`${LINES[0]}\n`, '# c\n', 'add chian ip kube-proxy x\n']))
      .toThrow(/line 3: unknown object type "chian"/);
  });

  it('rejects a set property it does not know and an unterminated clause', () => {
    expect(() => parseTransaction('add set ip t s { type ipv4_addr ; bogus 1 ; }'))
      .toThrow(/line 1: unknown set property "bogus"/);
    expect(() => parseTransaction('add set ip t s { type ipv4_addr }'))
      .toThrow(/clause not ended/);
  });
});

describe('canonical order (upstream sortNFTablesTransaction)', () => {
  it('orders by object type, then name, keeping rule order and sorting other lines', () => {
    const text = [
      'add element ip t m { 2 : drop }',
      'add rule ip t c b',
      'add element ip t m { 1 : drop }',
      'add chain ip t c',
      'add rule ip t a z',
      'add rule ip t c a',
      '# comment',
      'add map ip t m { type inet_service : verdict ; }',
      'add table ip t { comment "x" ; }',
    ].join('\n');
    expect(sortTransactionText(text)).toBe([
      'add table ip t { comment "x" ; }',
      'add chain ip t c',
      'add rule ip t a z',
      'add rule ip t c b',
      'add rule ip t c a',
      'add map ip t m { type inet_service : verdict ; }',
      'add element ip t m { 1 : drop }',
      'add element ip t m { 2 : drop }',
    ].join('\n') + '\n');
  });
});
