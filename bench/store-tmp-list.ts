import { buildMemoryStore } from '../src/store/index.js';
import { mulberry32, podJson } from './store-pod-gen.js';
const s = buildMemoryStore();
const rnd = mulberry32(3);
const ps = Array.from({ length: 100_000 }, (_, i) => podJson(rnd, i));
await Promise.all(Array.from({ length: 200 }, async (_, w) => {
  for (let i = w; i < ps.length; i += 200) await s.create(process.env.FLAT ? Buffer.from(ps[i]!.key).toString() : ps[i]!.key, ps[i]!.json);
}));
for (let k = 0; k < 3; k++) {
  let t0 = performance.now();
  const all = await s.list('/registry/pods/');
  console.log('list', all.items.length, performance.now() - t0);
  t0 = performance.now();
  const all2 = await s.list('/registry/pods/', { limit: 500 });
  console.log('page', all2.items.length, performance.now() - t0);
}
