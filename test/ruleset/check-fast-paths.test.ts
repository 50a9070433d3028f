// The whole-dump check scans kube-proxy's regular shapes in place (plain dotted quads, decimal
// ports, ADDR:PORT, consecutive rules of one chain, a repeated jump target) and hands the rest
// to the general checks: values at the edges of those shapes get the general verdict, and
// chain bookkeeping shared between consecutive rules stays per table.

import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { checkRuleText, type ProxyMode as RuleFormat } from '../../src/proxy/registry.js';

function refusal(format: RuleFormat, text: string): string {
  try {
    checkRuleText(format, text);
  } catch (e) {
    if (isKdpError(e, 'KDP_PARSE')) return e.message;
    throw e;
  }
  return 'accepted';
}

const ipt = (rule: string) =>
  `*nat\n:KUBE-SEP-A - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n${rule}\nCOMMIT\n`;

describe('iptables values at the edge of the in-place checks', () => {
  it.each([
    ['-A KUBE-SEP-A -s 010.1.2.3 -j KUBE-MARK-MASQ', 'accepted'],
    ['-A KUBE-SEP-A -s 10.1.2.3/32 -j KUBE-MARK-MASQ', 'accepted'],
    ['-A KUBE-SEP-A -s 10.1.2.3/33 -j KUBE-MARK-MASQ', /line 4: host\/network `10.1.2.3\/33'/],
    ['-A KUBE-SEP-A -s 10.1.2.256 -j KUBE-MARK-MASQ', /line 4: host\/network `10.1.2.256'/],
    ['-A KUBE-SEP-A -s 1000.1.2.3 -j KUBE-MARK-MASQ', /line 4: host\/network `1000.1.2.3'/],
    ['-A KUBE-SEP-A -s 10.0.0.0/255.0.0.0 -j KUBE-MARK-MASQ', 'accepted'],
    ['-A KUBE-SEP-A -p tcp --dport 65535 -j KUBE-MARK-MASQ', 'accepted'],
    ['-A KUBE-SEP-A -p tcp --dport 65536 -j KUBE-MARK-MASQ', /invalid port\/service `65536'/],
    ['-A KUBE-SEP-A -p tcp --dport 000080 -j KUBE-MARK-MASQ', 'accepted'],
    ['-A KUBE-SEP-A -p tcp -j DNAT --to-destination 10.1.2.3:8080', 'accepted'],
    ['-A KUBE-SEP-A -p tcp -j DNAT --to-destination 10.1.2.3:', /bad --to-destination/],
    ['-A KUBE-SEP-A -p tcp -j DNAT --to-destination 10.1.2.3:99999', /bad --to-destination/],
    ['-A KUBE-SEP-A -p tcp -j DNAT --to-destination 10.1.2.300:80', /bad --to-destination/],
    ['-A KUBE-SEP-A -p tcp -j DNAT --to-destination 10.1.2.3-10.1.2.9:80-90', 'accepted'],
  ] as const)('%s', (rule, want) => {
    const got = refusal('iptables', ipt(rule));
    if (want === 'accepted') expect(got).toBe('accepted');
    else expect(got).toMatch(want);
  });

  it('refuses an IPv6 address after in-place IPv4 ones in the same table', () => {
    const text = ipt('-A KUBE-SEP-A -s 10.1.2.3 -j KUBE-MARK-MASQ\n' +
      '-A KUBE-SEP-A -s fd00::1 -j KUBE-MARK-MASQ');
    expect(refusal('iptables', text)).toMatch(/line 5: an IPv6 address in a table of IPv4/);
  });

  it('checks the chain of a rule again in the next table, even when it has the same name', () => {
    const text = '*filter\n:KUBE-X - [0:0]\n-A KUBE-X -j RETURN\nCOMMIT\n' +
      '*nat\n-A KUBE-X -j RETURN\nCOMMIT\n';
    expect(refusal('iptables', text)).toMatch(/line 6: chain KUBE-X does not exist/);
  });

  it('finds a loop closed through a target repeated rule after rule', () => {
    const text = '*nat\n:A - [0:0]\n:B - [0:0]\n-A PREROUTING -j A\n-A A -j B\n-A A -j B\n' +
      '-A B -j A\nCOMMIT\n';
    expect(refusal('iptables', text)).toMatch(/line 7: jumps loop \(A → B → A\)/);
  });
});

const nft = (rules: string) => 'add table ip t\nadd chain ip t c { type nat hook output ' +
  `priority -100 ; }\nadd chain ip t d\n${rules}\n`;

describe('nft values at the edge of the in-place checks', () => {
  it.each([
    ['add rule ip t c ip daddr 10.1.2.3 accept', 'accepted'],
    ['add rule ip t c ip daddr 10.1.2.256 accept', /line 4: 10.1.2.256 is not an IPv4 address/],
    ['add rule ip t c ip daddr { 10.1.2.3, 10.1.2.300 } accept', /10.1.2.300 is not an IPv4/],
    ['add rule ip t c ip saddr != 10.244.0.0/16 jump d', 'accepted'],
    ['add rule ip t c ip saddr != 10.244.0.0/33 jump d', /10.244.0.0\/33 is not an IPv4/],
    ['add rule ip t c tcp dport 65535 accept', 'accepted'],
    ['add rule ip t c tcp dport 65536 accept', /line 4: 65536 is not a port/],
    ['add rule ip t c meta l4proto tcp dnat to 10.1.2.3:8080', 'accepted'],
    ['add rule ip t c meta l4proto tcp dnat to 10.1.2.3:80800', /80800 is not a port/],
    ['add rule ip t c meta l4proto tcp dnat to 10.1.2.333:80', /10.1.2.333 is not an address/],
    ['add rule ip t c meta l4proto tcp dnat ip to 10.1.2.3:80', 'accepted'],
    ['add rule ip t c index 0 jump nope', /line 4: chain nope does not exist/],
    ['add rule ip t c numgen random mod 2 vmap { 0 : goto d , 1 : goto e }',
      /chain e does not exist/],
    ['add rule ip t c { jump d', /line 4: unbalanced braces/],
    ['add rule ip t c } jump d {', /line 4: unbalanced braces/],
  ] as const)('%s', (rules, want) => {
    const got = refusal('nftables', nft(rules));
    if (want === 'accepted') expect(got).toBe('accepted');
    else expect(got).toMatch(want);
  });

  it('checks that a rule\'s chain still exists after it was deleted between two rules', () => {
    const text = nft('add rule ip t d accept\ndelete chain ip t d\nadd rule ip t d accept');
    expect(refusal('nftables', text)).toMatch(/line 6: chain d does not exist/);
  });

  it('checks the chain of a rule again in another table with the same chain name', () => {
    const text = nft('add rule ip t d accept\nadd table ip u\nadd rule ip u d accept');
    expect(refusal('nftables', text)).toMatch(/line 6: chain d does not exist/);
  });

  it('finds a loop through a verdict map and consecutive rules', () => {
    const text = nft('add rule ip t c jump d\nadd rule ip t d numgen random mod 2 vmap ' +
      '{ 0 : goto c , 1 : goto c }');
    expect(refusal('nftables', text)).toMatch(/line 5: jumps loop \(c → d → c\)/);
  });
});
