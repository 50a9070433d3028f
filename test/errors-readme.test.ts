import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../src/errors.js';

// The README's error table is documentation users branch on; it must list exactly the codes of
// src/errors.ts with the same HTTP status.
function readmeRows(): Map<string, number> {
  const text = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const rows = new Map<string, number>();
  for (const m of text.matchAll(/^\| `(KDP_[A-Z_]+)` \| (\d{3}) \|/gm)) rows.set(m[1]!, Number(m[2]));
  return rows;
}

describe('README error table', () => {
  it('lists every catalogue code with its HTTP status, and nothing else', () => {
    const rows = readmeRows();
    const expected = new Map(Object.entries(CATALOGUE).map(([code, e]) => [code, e.status]));
    expect([...rows.entries()].sort()).toEqual([...expected.entries()].sort());
  });
});
