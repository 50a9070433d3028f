import { readFileSync, writeFileSync } from 'node:fs';
import { applyTransaction } from '../../src/ruleset/nftables/fake.js';
import { formatListJson } from '../../src/ruleset/nftables/list-json.js';
import { emptyRuleset } from '../../src/ruleset/nftables/model.js';
import { parseTransaction } from '../../src/ruleset/nftables/transaction.js';
const m = applyTransaction(emptyRuleset(), parseTransaction(readFileSync(process.argv[2]!, 'utf8')));
writeFileSync('/tmp/nftcheck/compiled.json', formatListJson(m));
