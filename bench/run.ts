// `npm run bench [-- FILTER]`: runs every bench/*.ts (or those whose name contains FILTER), one
// at a time in its own process so figures do not disturb each other, and prints their output.
// Each benchmark is seeded and prints its own figures and the ratio to its target.

import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] ?? '';
const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('lib-') && f.includes(filter))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f}`);
  try {
    execFileSync(process.execPath, ['--expose-gc', join(here, '..', 'bin', 'run-ts.js'), join(here, f)], {
      stdio: 'inherit',
      timeout: 15 * 60_000,
    });
  } catch {
    failed++;
    console.log(`!!! ${f} failed`);
  }
}
process.exitCode = failed ? 1 : 0;
