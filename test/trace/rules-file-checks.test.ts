// `kdp trace --rules FILE` traces only tables the kernel would take: a table it refuses (a jump
// loop, a DNAT to 999.1.1.1:99999, a goto to a missing chain, a truncated dump, an empty file)
// is KDP_PARSE naming the file and the line, exit status 2 — never a verdict.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kdp } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-trace-rules-'));
const golden = (s: string, mode: string) => readFileSync(
  fileURLToPath(new URL(`../../rules/${s}/${mode}.golden`, import.meta.url)), 'utf8');

function file(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

async function trace(f: string, mode: string) {
  return kdp('trace', '--rules', f, '--mode', mode, '--node-ip', '172.18.0.2', '192.0.2.1',
    '10.96.0.1:80');
}

describe('kdp trace --rules refuses tables the kernel refuses', () => {
  it.each([
    ['a chain loop', 'loop.iptables', 'iptables',
      '*nat\n:PREROUTING ACCEPT [0:0]\n:A - [0:0]\n:B - [0:0]\n-A PREROUTING -j A\n-A A -j B\n' +
      '-A B -j A\nCOMMIT\n', /line 7: jumps loop \(A → B → A\)/],
    ['a DNAT to 999.1.1.1:99999', 'dnat.iptables', 'iptables',
      '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp -d 10.96.0.1 --dport 80 -j DNAT ' +
      '--to-destination 999.1.1.1:99999\nCOMMIT\n', /line 3: bad --to-destination/],
    ['a table without COMMIT', 'nocommit.iptables', 'iptables',
      '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j ACCEPT\n', /line 1: table has no COMMIT/],
    ['a goto to a missing chain', 'goto.nft', 'nftables',
      'table ip t {\n\tchain pre {\n\t\ttype nat hook prerouting priority dstnat; policy accept;' +
      '\n\t\tip daddr 10.96.0.1 goto nochain\n\t}\n}\n', /line 4: chain nochain does not exist/],
    ['an empty file', 'empty.nft', 'nftables', '', /empty input: no tables/],
    ['an nft transaction cut inside a dnat address', 'cut.nft', 'nftables',
      'add table ip t\nadd chain ip t pre { type nat hook prerouting priority -100 ; }\n' +
      'add rule ip t pre ip daddr 10.96.0.1 tcp dport 80 dnat to 10.2',
      /line 3: 10\.2 is not an address/],
  ])('%s', async (_what, name, mode, text, msg) => {
    const f = file(name, text);
    const r = await trace(f, mode);
    expect(r.code, r.err).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^error \[KDP_PARSE\]: /);
    expect(r.err).toContain(`${f}: `);
    expect(r.err).toMatch(msg);
  });

  it('names the line of a golden transaction cut short inside a jump', async () => {
    const full = golden('10-session-affinity', 'nftables');
    const cut = full.slice(0, full.indexOf(' jump ', full.indexOf('add rule')) + 7);
    const line = cut.split('\n').length;
    const r = await trace(file('cut-golden.nft', cut), 'nftables');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`nft line ${line}: chain \\S+ does not exist`));
  });

  it('still traces the golden it was cut from', async () => {
    const r = await trace(file('full.nft', golden('10-session-affinity', 'nftables')), 'nftables');
    expect([0, 1]).toContain(r.code);
    expect(r.out).toMatch(/verdict: /);
  });
});
