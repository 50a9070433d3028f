import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { RULES_DIR } from '../helpers/scenarios.js';
import { diffTexts } from './helpers.js';

const goldenPath = (s: string, m: string) => join(RULES_DIR, s, `${m}.golden`);
const golden = (s: string, m: string) => readFileSync(goldenPath(s, m), 'utf8');

/** The text with line `n` (1-based) replaced. */
function withLine(text: string, n: number, line: string): string {
  const lines = text.split('\n');
  lines[n - 1] = line;
  return lines.join('\n');
}

function errorOf(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (isKdpError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a KdpError');
}

describe('bad input names the side, the line and the reason', () => {
  it('an nft transaction line', () => {
    const a = golden('01-clusterip', 'nftables');
    const b = withLine(a, 5, 'add chain ip kube-proxy filter-forward { type filter ; }');
    expect(errorOf(() => diffTexts(a, b))).toEqual({
      code: 'KDP_PARSE', message: 'b: nft transaction line 5: expected "type T hook H": ' +
        'add chain ip kube-proxy filter-forward { type filter ; }',
    });
  });

  it('an ipvs state line', () => {
    const a = golden('01-clusterip', 'ipvs');
    const b = withLine(a, 3, '-a -t 10.96.0.20:80 -r 10.244.0.7:8080 -m -w heavy');
    const e = errorOf(() => diffTexts(a, b));
    expect(e.code).toBe('KDP_PARSE');
    expect(e.message).toMatch(/^b: ipvsadm line 3: expected -w WEIGHT/);
  });

  it('an iptables line in the second family of a dual-stack dump keeps its file line', () => {
    const a = golden('01-clusterip', 'iptables');
    const v6 = golden('16-ipv6', 'iptables');
    const dual = `${a}${v6}`;
    const at = a.split('\n').length + 2;
    const bad = withLine(dual, at, '-A KUBE-SERVICES -j "oops');
    const e = errorOf(() => diffTexts(dual, bad));
    expect(e.message).toBe(`b: iptables line ${at}: unterminated quote: -j "oops`);
  });
});

describe('reading a table from standard input', () => {
  it('`-` is stdin, compared like a file', async () => {
    const kdp = join(import.meta.dirname, '../../bin/kdp.js');
    const text = golden('04-nodeport', 'nftables');
    const run = await new Promise<{ code: number; out: string }>((resolve) => {
      const child = execFile(process.execPath, [kdp, 'diff', '-', goldenPath('01-clusterip',
        'nftables')], (err, out) => resolve({ code: err ? Number(err.code) : 0, out }));
      child.stdin!.end(text);
    });
    expect(run.code).toBe(1);
    expect(run.out).toContain('default/echo:http  - NodePort 30080\n');
  });
});
