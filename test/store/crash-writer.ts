// Child process for the crash test: writes forever with 20 concurrent writers and prints
// `acked <key> <revision>` after each acknowledged write. The parent kills it with SIGKILL.
import { buildEmbeddedStore } from '../../src/store/index.js';

const dir = process.argv[2]!;
const store = await buildEmbeddedStore({ dataDir: dir, snapshotEvery: 200 });
process.stdout.write('ready\n');
async function writer(w: number): Promise<never> {
  for (let i = 0; ; i++) {
    const key = `/registry/pods/w${w}/p${i}`;
    const kv = await store.create(key, JSON.stringify({ w, i, pad: 'x'.repeat(200) }));
    process.stdout.write(`acked ${key} ${kv.modRevision}\n`);
    if (i % 3 === 0) {
      const u = await store.update(key, JSON.stringify({ w, i, updated: true }), kv.modRevision);
      process.stdout.write(`updated ${key} ${u.modRevision}\n`);
    }
  }
}
await Promise.all(Array.from({ length: 20 }, (_, w) => writer(w)));
