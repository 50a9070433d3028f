// Child process for data-dir-modes.test.ts: runs ensureDataDir (as another user) and prints
// its log lines, then `ok`.
import { ensureDataDir } from '../../src/cluster/data-dir.js';

await ensureDataDir(process.argv[2]!, (l) => process.stdout.write(`${l}\n`));
process.stdout.write('ok\n');
