import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listSnapshots, readSnapshot, RuleHistory } from '../../src/proxy/history.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function record(h: RuleHistory, family: 'IPv4' | 'IPv6', text: string) {
  return h.record({ mode: 'iptables', family, full: true, text, origins: {} });
}

describe('kube-proxy rule history', () => {
  it('keeps the newest syncs of both families, numbered on across a restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-hist-'));
    dirs.push(dir);
    const h = new RuleHistory(dir, 3);
    record(h, 'IPv4', 'a');
    record(h, 'IPv6', 'b');
    record(h, 'IPv4', 'c');
    record(h, 'IPv6', 'd');
    expect(readdirSync(dir).sort()).toEqual(['000002-IPv6.json', '000003-IPv4.json', '000004-IPv6.json']);
    expect(listSnapshots(dir).map((m) => [m.seq, m.family])).toEqual([[2, 'IPv6'], [3, 'IPv4'], [4, 'IPv6']]);
    expect(readSnapshot(dir, '@latest').text).toBe('c');
    expect(readSnapshot(dir, '@latest', 'IPv6').text).toBe('d');
    expect(readSnapshot(dir, '@latest~1', 'IPv6').text).toBe('b');
    expect(() => readSnapshot(dir, '@1')).toThrow('snapshot @1 is not kept (have @3..@3)');
    const again = new RuleHistory(dir, 3);
    expect(record(again, 'IPv4', 'e').seq).toBe(5);
    expect(readSnapshot(dir, '@5').text).toBe('e');
  });
});
