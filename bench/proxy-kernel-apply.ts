// Kernel apply benchmark (root): the time `iptables-restore` and `nft -f` take to apply the
// full-sync output for N seeded Services × 10 endpoints in a throwaway network namespace, with
// the tool's own user and system CPU (GNU time), to show where the time goes.
// Run: node bin/run-ts.js bench/proxy-kernel-apply.ts [sizes, default 1000,5000]
//
// iptables is applied as kube-proxy does (`--noflush`, which it always passes) and, for
// comparison, without `--noflush` (same input, empty table). iptables-nft 1.8.9's restore with
// `--noflush` spends user time that grows faster than quadratically with the number of chains
// (a sorted linked list of chain names, one insertion walk per command); the run is skipped
// with the predicted time when that exceeds BUDGET_S. `nft -f` spends its time in the kernel:
// binding each rule's anonymous vmap walks the transaction so far (`__nft_set_trans_bind`).

import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
/** Skip an iptables --noflush run predicted to take longer than this (user CPU, seconds). */
const BUDGET_S = 300;
const sizes = (process.argv[2] ?? '1000,5000').split(',').map(Number);

interface Usage { wall: number; user: number; sys: number }

/** Runs `file args` in `ns` under GNU time; wall, user and system seconds of the tool. */
async function timedRun(ns: string, file: string, args: string[], input: string): Promise<Usage> {
  const out = join(tmpdir(), `kdp-apply-${randomBytes(4).toString('hex')}`);
  try {
    await exec.run('/usr/bin/time', ['-f', '%e %U %S', '-o', out, file, ...args],
      { netns: ns, input, timeoutMs: TIMEOUT_MS });
    const [wall, user, sys] = readFileSync(out, 'utf8').trim().split('\n').pop()!.split(' ')
      .map(Number);
    return { wall: wall!, user: user!, sys: sys! };
  } finally {
    rmSync(out, { force: true });
  }
}

/** Runs `fn` in a fresh namespace; a failed run is reported (undefined), not fatal. */
async function inFreshNetns(fn: (ns: string) => Promise<Usage>): Promise<Usage | Error> {
  const ns = `kdp-t-${randomBytes(3).toString('hex')}`;
  await ensureNetns(exec, ns);
  try {
    return await fn(ns);
  } catch (err) {
    return err as Error;
  } finally {
    await deleteNetns(exec, ns);
  }
}

const show = (label: string, u: Usage | Error) => console.log(`  ${label.padEnd(44)} ` +
  (u instanceof Error ? `failed: ${u.message.split('\n')[0]!.slice(-160)}`
    : `wall ${u.wall.toFixed(2).padStart(7)} s, user ${u.user.toFixed(2).padStart(7)} s, ` +
    `sys ${u.sys.toFixed(2).padStart(7)} s`));

/** Measured (size, user seconds) of iptables --noflush, for the prediction. */
const noflush: Array<[number, number]> = [];

/** User seconds predicted at `n`: power law through the last two points (exponent ≥ 2). */
function predict(n: number): number {
  const [a, b] = noflush.slice(-2);
  if (b === undefined) return 0;
  const k = a === undefined || a[1] <= 0 ? 2
    : Math.max(2, Math.log(b[1] / a[1]) / Math.log(b[0] / a[0]));
  return b[1] * (n / b[0]) ** k;
}

for (const mode of ['iptables', 'nftables'] as ProxyMode[]) {
  const backend = await loadBackend(mode);
  console.log(`${mode}:`);
  for (const n of sizes) {
    const objects = generateServices(n, { seed: 42 });
    const text = compileWith(backend, { objects, mode, nodeName: 'node-0',
      nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
    const lines = text.split('\n');
    const chains = lines.filter((l) => l.startsWith(':') || l.startsWith('add chain')).length;
    const rules = lines.filter((l) => l.startsWith('-A') || l.startsWith('add rule')).length;
    console.log(` ${n} services: ${chains} chains, ${rules} rules, ` +
      `${(text.length / 1e6).toFixed(1)} MB`);
    if (mode === 'nftables') {
      show('nft -f', await inFreshNetns((ns) => timedRun(ns, 'nft', ['-f', '-'], text)));
      continue;
    }
    const base = ['-w', '5', '--counters'];
    show('iptables-restore (no --noflush, comparison)',
      await inFreshNetns((ns) => timedRun(ns, 'iptables-restore', base, text)));
    const predicted = predict(n);
    if (predicted > BUDGET_S) {
      console.log(`  iptables-restore --noflush (kube-proxy's form) skipped: predicted ` +
        `${predicted.toFixed(0)} s of user CPU (power law through the two largest sizes ` +
        `measured), over the ${BUDGET_S} s budget`);
      continue;
    }
    const u = await inFreshNetns((ns) =>
      timedRun(ns, 'iptables-restore', [...base, '--noflush'], text));
    show('iptables-restore --noflush (kube-proxy\'s form)', u);
    if (!(u instanceof Error)) noflush.push([n, u.user]);
  }
}
