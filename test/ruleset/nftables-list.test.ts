// `nft list ruleset` text and `nft -j list ruleset` JSON, as nftables 1.0.6 printed them in a
// network namespace (fixtures), parse into the model and format back to the same bytes; the
// two forms of one ruleset describe the same tables once normalised.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { formatListJson, parseListJson } from '../../src/ruleset/nftables/list-json.js';
import { formatListText, parseListText } from '../../src/ruleset/nftables/list-text.js';
import { diffRulesets, normalizeRuleset } from '../../src/ruleset/nftables/normalize.js';
import { formatPriority, parsePriority } from '../../src/ruleset/nftables/priority.js';

const fixture = (f: string) => readFileSync(join(import.meta.dirname, 'fixtures', f), 'utf8');

describe('nft list text', () => {
  for (const f of ['nft-list.txt', 'nft-list-handles.txt', 'nft-list-dynamic.txt']) {
    it(`formats ${f} back to the same bytes`, () => {
      const x = fixture(f);
      expect(formatListText(parseListText(x))).toBe(x);
    });
  }

  it('resolves named priorities and reads rules as words with comments', () => {
    const t = parseListText(fixture('nft-list.txt')).tables.get('ip kube-proxy')!;
    expect(t.comment).toBe('rules for kube-proxy');
    expect(t.chains.get('filter-prerouting-pre-dnat')).toMatchObject({ type: 'filter',
      hook: 'prerouting', priority: -110, policy: 'accept' });
    expect(t.chains.get('nat-postrouting')!.priority).toBe(100);
    const reject = t.chains.get('cluster-ips-check')!.rules[0]!;
    expect(reject).toEqual({ tokens: ['ip', 'daddr', '@cluster-ips', 'reject'],
      comment: 'Reject traffic to invalid ports of ClusterIPs' });
  });

  it('reads multi-line element lists with comments and verdicts', () => {
    const t = parseListText(fixture('nft-list.txt')).tables.get('ip kube-proxy')!;
    const nes = t.sets.get('no-endpoint-services')!;
    expect(nes.kind).toBe('map');
    expect(nes.elements.get('172.30.0.46 . tcp . 80')).toEqual({
      key: ['172.30.0.46', 'tcp', '80'], comment: 'ns6/svc6:p80', value: ['goto reject-chain'] });
    expect(t.sets.get('cluster-ips')!.elements.size).toBe(6);
  });

  it('keeps element timeouts and expiry, which normalisation then drops', () => {
    const rs = parseListText(fixture('nft-list-dynamic.txt'));
    const aff = rs.tables.get('ip t')!.sets.get('aff')!;
    expect(aff.timeout).toBe(10800);
    expect(aff.elements.get('1.2.3.5')).toMatchObject({ timeout: '1h' });
    expect(normalizeRuleset(rs).tables.get('ip t')!.sets.get('aff')!.elements.size).toBe(0);
  });

  it('names the line of an unparseable statement', () => {
    const text = 'table ip t {\n\tchain c {\n\t}\n\tbogus thing\n}\n';
    try {
      parseListText(text);
      expect.unreachable();
    } catch (e) {
      expect(isKdpError(e, 'KDP_PARSE')).toBe(true);
      expect((e as Error).message).toMatch(/line 4: unknown table statement/);
    }
  });

  it('prints standard priorities by name only where the hook allows it', () => {
    expect(formatPriority(-110, 'prerouting')).toBe('dstnat - 10');
    expect(formatPriority(-100, 'output')).toBe('-100');
    expect(formatPriority(100, 'postrouting')).toBe('srcnat');
    expect(formatPriority(0, 'input')).toBe('filter');
    expect(parsePriority('dstnat - 10')).toBe(-110);
    expect(parsePriority('srcnat')).toBe(100);
  });
});

describe('nft -j list JSON', () => {
  for (const f of ['nft-list.json', 'nft-list-dynamic.json']) {
    it(`formats ${f} back to the same bytes`, () => {
      const x = fixture(f);
      const p = parseListJson(x);
      expect(formatListJson(p.ruleset, p.metainfo)).toBe(x);
    });
  }

  it('describes the same tables as the text listing of the same kernel state', () => {
    const fromJson = normalizeRuleset(parseListJson(fixture('nft-list.json')).ruleset);
    const fromText = normalizeRuleset(parseListText(fixture('nft-list.txt')));
    // nftables 1.0.6 leaves table and chain comments out of its JSON.
    expect(diffRulesets(fromJson, fromText, { ignoreObjectComments: true })).toEqual([]);
    expect(diffRulesets(fromJson, fromText).length).toBeGreaterThan(0);
  });

  it('renders JSON statements as nft prints them', () => {
    const t = parseListJson(fixture('nft-list.json')).ruleset.tables.get('ip kube-proxy')!;
    const words = (chain: string, i = 0) => t.chains.get(chain)!.rules[i]!.tokens.join(' ');
    expect(words('masquerading')).toBe('meta mark & 0x00004000 == 0x00000000 return');
    expect(words('mark-for-masquerade')).toBe('meta mark set meta mark | 0x00004000');
    expect(words('filter-prerouting-pre-dnat')).toBe('ct state new jump firewall-check');
    expect(words('service-ULMVA6XW-ns1/svc1/tcp/p80', 1)).toBe('numgen random mod 1 vmap '
      + '{ 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }');
  });

  it('reports an unsupported statement as a parse error naming the object', () => {
    const bad = '{"nftables": [{"table": {"family": "ip", "name": "t", "handle": 1}}, '
      + '{"chain": {"family": "ip", "table": "t", "name": "c", "handle": 1}}, '
      + '{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 2, "expr": '
      + '[{"xt": {"type": "match"}}]}}]}';
    expect(() => parseListJson(bad)).toThrow(/nft JSON object 2: rule in chain c/);
  });
});

describe('a compiled table written in the listing forms', () => {
  it('every nftables golden survives text and JSON formatting and parsing', async () => {
    const { readdirSync, existsSync } = await import('node:fs');
    const { applyTransaction } = await import('../../src/ruleset/nftables/fake.js');
    const { emptyRuleset } = await import('../../src/ruleset/nftables/model.js');
    const { parseTransaction } = await import('../../src/ruleset/nftables/transaction.js');
    const rules = join(import.meta.dirname, '../../rules');
    let checked = 0;
    for (const dir of readdirSync(rules)) {
      const golden = join(rules, dir, 'nftables.golden');
      if (!existsSync(golden)) continue;
      const text = readFileSync(golden, 'utf8');
      const model = applyTransaction(emptyRuleset(), parseTransaction(text));
      const want = normalizeRuleset(model);
      const viaText = normalizeRuleset(parseListText(formatListText(model)));
      const viaJson = normalizeRuleset(parseListJson(formatListJson(model)).ruleset);
      expect(diffRulesets(want, viaText), dir).toEqual([]);
      expect(diffRulesets(want, viaJson), dir).toEqual([]);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });
});
