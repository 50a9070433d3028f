// The in-memory nftables applies a transaction all or nothing and fails where the kernel
// would; its dump is the state as `add` lines.

import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { applyTransaction, dumpOps } from '../../src/ruleset/nftables/fake.js';
import { emptyRuleset } from '../../src/ruleset/nftables/model.js';
import { formatTransaction, parseTransaction } from '../../src/ruleset/nftables/transaction.js';

const BASE = [
  'add table ip t { comment "c" ; }',
  'add chain ip t a',
  'add chain ip t b',
  'add map ip t m { type inet_service : verdict ; }',
  'add rule ip t a jump b',
  'add element ip t m { 80 : goto b }',
].join('\n');

describe('nftables fake', () => {
  it('dumps the state it was given as add lines', () => {
    const rs = applyTransaction(emptyRuleset(), parseTransaction(BASE));
    expect(formatTransaction(dumpOps(rs))).toBe([
      'add table ip t { comment "c" ; }',
      'add chain ip t a',
      'add chain ip t b',
      'add map ip t m { type inet_service : verdict ; }',
      'add rule ip t a jump b',
      'add element ip t m { 80 : goto b }',
    ].join('\n') + '\n');
  });

  it('flushes chains and maps and deletes elements', () => {
    let rs = applyTransaction(emptyRuleset(), parseTransaction(BASE));
    rs = applyTransaction(rs, parseTransaction(
      'flush chain ip t a\ndelete element ip t m { 80 }\nadd element ip t m { 81 : drop }'));
    const t = rs.tables.get('ip t')!;
    expect(t.chains.get('a')!.rules).toEqual([]);
    expect([...t.sets.get('m')!.elements.keys()]).toEqual(['81']);
  });

  it('leaves the state untouched when any operation fails', () => {
    const rs = applyTransaction(emptyRuleset(), parseTransaction(BASE));
    const bad = parseTransaction('flush chain ip t a\ndelete element ip t m { 9 }');
    expect(() => applyTransaction(rs, bad)).toThrow(/operation 2 failed/);
    expect(rs.tables.get('ip t')!.chains.get('a')!.rules).toHaveLength(1);
  });

  it('refuses to delete a chain that still has rules or is still referenced', () => {
    const rs = applyTransaction(emptyRuleset(), parseTransaction(BASE));
    expect(() => applyTransaction(rs, parseTransaction('delete chain ip t a')))
      .toThrow(/not empty/);
    expect(() => applyTransaction(rs, parseTransaction('delete chain ip t b')))
      .toThrow(/in use/);
    try {
      applyTransaction(rs, parseTransaction('add rule ip t nope drop'));
    } catch (e) {
      expect(isKdpError(e, 'KDP_HOST_EXEC')).toBe(true);
    }
  });
});
