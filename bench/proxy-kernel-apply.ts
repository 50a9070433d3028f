// Kernel apply benchmark (root): time `iptables-restore` and `nft -f` of the full-sync output
// for 1,000 and 5,000 seeded Services × 10 endpoints in a throwaway network namespace.
// Run: sudo node bin/run-ts.js bench/proxy-kernel-apply.ts [sizes, default 1000,5000]
// (iptables-nft takes tens of seconds for 10k+ rules, hence the long exec timeout.)

import { randomBytes } from 'node:crypto';
import { buildHostExec } from '../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../src/host/netns.js';
import type { ProxyMode } from '../src/proxy/backend.js';
import { compileWith, loadBackend } from '../src/proxy/compile.js';
import { generateServices } from '../test/helpers/service-generator.js';

if (process.getuid?.() !== 0) {
  console.log('needs root (network namespaces); skipped');
  process.exit(0);
}

const exec = buildHostExec();
const TIMEOUT_MS = 15 * 60_000;
const sizes = (process.argv[2] ?? '1000,5000').split(',').map(Number);
/** As src/host/rules.ts applies them, with a timeout long enough for large inputs. */
const APPLY: Partial<Record<ProxyMode, (ns: string, text: string) => Promise<unknown>>> = {
  iptables: (ns, text) => exec.run('iptables-restore', ['-w', '5', '--noflush', '--counters'],
    { netns: ns, input: text, timeoutMs: TIMEOUT_MS }),
  nftables: (ns, text) => exec.run('nft', ['-f', '-'],
    { netns: ns, input: text, timeoutMs: TIMEOUT_MS }),
};

for (const mode of ['iptables', 'nftables'] as const) {
  let backend;
  try {
    backend = await loadBackend(mode);
  } catch {
    console.log(`${mode}: no backend, skipped`);
    continue;
  }
  for (const n of sizes) {
    const objects = generateServices(n, { seed: 42 });
    const text = compileWith(backend, { objects, mode, nodeName: 'node-0',
      nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
    const ns = `kdp-t-${randomBytes(3).toString('hex')}`;
    await ensureNetns(exec, ns);
    try {
      const t0 = process.hrtime.bigint();
      await APPLY[mode]!(ns, text);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const lines = text.split('\n').length;
      console.log(`${mode}: apply ${n} services (${lines} lines, ${(text.length / 1e6)
        .toFixed(1)} MB) in a fresh netns: ${ms.toFixed(0)} ms`);
    } finally {
      await deleteNetns(exec, ns);
    }
  }
}
