// Prints the README's error-code table from src/errors.ts (paste between the markers).
import { CATALOGUE } from '../src/errors.js';

console.log('| code | HTTP | Status reason | when |');
console.log('|---|---|---|---|');
for (const [code, e] of Object.entries(CATALOGUE)) {
  console.log(`| \`${code}\` | ${e.status} | ${e.reason || '—'} | ${e.summary} |`);
}
