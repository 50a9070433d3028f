// Writes docs/cli.md from the command declarations (`npm run docs:cli`); `--check` exits 1
// when the file is stale instead of writing it.
import { readFileSync, writeFileSync } from 'node:fs';
import { renderCliDoc } from '../src/cli/cli-doc.js';

const path = new URL('../docs/cli.md', import.meta.url);
const text = renderCliDoc();
if (process.argv.includes('--check')) {
  let old = '';
  try { old = readFileSync(path, 'utf8'); } catch { /* missing: stale */ }
  if (old !== text) {
    console.error('docs/cli.md is stale: run npm run docs:cli');
    process.exitCode = 1;
  }
} else {
  writeFileSync(path, text);
}
