// `kdp diff` compares only tables the kernel would take: a truncated transaction or restore
// input, a jump to a missing chain or a loop is KDP_PARSE naming the input and its line (exit 2),
// never a diff. An empty file is a table only when --format says which.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kdp } from '../helpers/cli.js';
import { compileScenario } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-diff-checked-'));

function file(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe('kdp diff checks both inputs whole', () => {
  it('refuses a transaction cut short inside a jump, naming the file and line', async () => {
    const full = await compileScenario('10-session-affinity', 'nftables');
    const cut = full.slice(0, full.indexOf(' jump ', full.indexOf('add rule')) + 7);
    const a = file('a.nft', full);
    const b = file('b.nft', cut);
    const r = await kdp('diff', a, b);
    expect(r.code, r.out).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(new RegExp(`KDP_PARSE\\]: ${b}: nft line ${cut.split('\n').length}: ` +
      'chain \\S+ does not exist'));
  });

  it('refuses restore input cut before COMMIT, naming the file and the table line', async () => {
    const full = await compileScenario('01-clusterip', 'iptables');
    const cut = full.slice(0, full.lastIndexOf('COMMIT'));
    const b = file('b.iptables', cut);
    const r = await kdp('diff', file('a.iptables', full), b);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/KDP_PARSE.*b\.iptables: iptables line \d+: table has no COMMIT/);
  });

  it('refuses a loop in either input', async () => {
    const loop = '*nat\n:PREROUTING ACCEPT [0:0]\n:A - [0:0]\n-A PREROUTING -j A\n-A A -j A\n' +
      'COMMIT\n';
    const r = await kdp('diff', file('loop.iptables', loop), file('ok.iptables',
      '*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/loop\.iptables: iptables line 5: jumps loop \(A → A\)/);
  });

  it('compares with an empty file when --format names its format', async () => {
    const full = await compileScenario('01-clusterip', 'iptables');
    const r = await kdp('diff', '--format', 'iptables', file('empty', ''),
      file('c.iptables', full));
    expect(r.code, r.err).toBe(1);
  });
});
