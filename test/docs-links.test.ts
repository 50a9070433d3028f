// The README is the user's page and `docs/` the rest: every relative link in them (and in the
// per-folder READMEs) must reach a file that exists, and the README keeps to what a user needs
// first (quick start, prerequisites, commands, modes): a guide's detail belongs in docs/.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  'src/trace/README.md', 'src/host/README.md', 'bench/README.md'];

describe('documentation', () => {
  it.each(pages)('%s: every relative link reaches a file', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const broken: string[] = [];
    for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue; // http:, https:, mailto:
      if (!existsSync(join(root, dirname(page), target))) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it('the README is a user\'s page: quick start with two commands, prerequisites, usage, guides', () => {
    const text = readFileSync(join(root, 'README.md'), 'utf8');
    const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings.slice(0, 4)).toEqual(['Quick start', 'Prerequisites', 'What runs', 'Usage']);
    expect(headings).toContain('Guides');
    const quick = /## Quick start\n\n```sh\n([^`]*)```/.exec(text)![1]!.trim().split('\n');
    expect(quick).toHaveLength(2);
    expect(text.split('\n').length).toBeLessThan(400);
  });
});
