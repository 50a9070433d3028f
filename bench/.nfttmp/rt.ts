import { readFileSync } from 'node:fs';
import { formatListText, parseListText } from '../../src/ruleset/nftables/list-text.js';
for (const f of process.argv.slice(2)) {
  const x = readFileSync(f, 'utf8');
  const y = formatListText(parseListText(x));
  console.log(f, x === y ? 'ROUNDTRIP OK' : 'DIFF');
  if (x !== y) { const a = x.split('\n'), b = y.split('\n'); for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) { console.log(i+1, JSON.stringify(a[i]), '\n   ', JSON.stringify(b[i])); break; } }
}
