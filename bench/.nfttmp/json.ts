import { readFileSync } from 'node:fs';
import { formatListJson, parseListJson } from '../../src/ruleset/nftables/list-json.js';
import { parseListText } from '../../src/ruleset/nftables/list-text.js';
import { diffRulesets, normalizeRuleset } from '../../src/ruleset/nftables/normalize.js';
const [jf, tf] = process.argv.slice(2);
const x = readFileSync(jf!, 'utf8');
const p = parseListJson(x);
const y = formatListJson(p.ruleset, p.metainfo);
console.log(x === y ? 'JSON ROUNDTRIP OK' : 'JSON DIFF');
if (x !== y) { for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) { console.log(x.slice(i - 200, i + 100)); console.log('---'); console.log(y.slice(i - 200, i + 100)); break; } }
const t = parseListText(readFileSync(tf!, 'utf8'));
console.log(diffRulesets(normalizeRuleset(p.ruleset), normalizeRuleset(t), {ignoreObjectComments: true}));
