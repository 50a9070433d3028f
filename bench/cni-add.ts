// CNI ADD/DEL/CHECK side by side (cni.md §6): kdp-cni in-process (as the node agent calls it),
// kdp-cni exec'd as the Node plugin (bin/kdp-cni.js), kdp-cni exec'd as the native plugin
// (native/kdp-cni-shim.c handing the request to a node agent's CNI service: what a runtime
// execs) and the reference Debian /usr/lib/cni/bridge + host-local, with the same config, each
// in its own throwaway node netns. Wall-clock medians in ms; the ratio is kdp/reference
// (target ≤ 1.0 for in-process and native). Needs root and a C compiler.
// node bin/run-ts.js bench/cni-add.ts [rounds] [impl,impl]   (default 8, all four)

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBridgeCache } from '../src/cni/bridge-state.js';
import { buildIpSessionPool } from '../src/host/ip-session.js';
import { runCniPlugin } from '../src/cni/plugin.js';
import { buildCniShim, cniSocketDir } from '../src/cni/shim-build.js';
import { serveCni } from '../src/cni/shim-service.js';
import { buildHostExec } from '../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../src/host/netns.js';
import { percentile, seededRandom } from './lib-bench.js';

const REF = '/usr/lib/cni';
const KDP_CNI = fileURLToPath(new URL('../bin/kdp-cni.js', import.meta.url));
const ROUNDS = Number(process.argv[2] ?? 8);
if (process.getuid?.() !== 0 || !existsSync(join(REF, 'bridge'))) {
  console.log('cni-add: needs root and /usr/lib/cni/bridge; skipped');
  process.exit(0);
}

type Impl = 'in-process' | 'exec' | 'native' | 'reference';
interface Outcome { code: number; stdout: string }
const exec = buildHostExec();
const rnd = seededRandom(5);
const tag = `kdp-t-b${Math.floor(rnd() * 0xfffff).toString(16)}`;
const dirs: string[] = [];
const netnses: string[] = [];
const closers: Array<() => void> = [];

function conf(impl: Impl, dataDir: string, ipMasq: boolean, subnet: string) {
  return {
    cniVersion: '1.0.0', name: 'kdpbench', type: impl === 'reference' ? 'bridge' : 'kdp-cni',
    bridge: 'kdpb0', isGateway: true, ipMasq, hairpinMode: true,
    ipam: { type: 'host-local', dataDir, ranges: [[{ subnet }]], routes: [{ dst: '0.0.0.0/0' }] },
  };
}

function spawnPlugin(file: string, nodeNs: string, env: Record<string, string>, stdin: string) {
  const args = ['netns', 'exec', nodeNs, ...(file.endsWith('.js') ? [process.execPath, file] : [file])];
  return new Promise<Outcome>((resolve) => {
    const c = spawn('ip', args, { env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    c.stdout.on('data', (d) => { stdout += d; });
    c.stderr.resume();
    c.on('close', (code) => resolve({ code: code ?? 1, stdout }));
    c.stdin.end(stdin);
  });
}

async function buildRunner(impl: Impl, nodeNs: string, dataDir: string) {
  if (impl === 'native') {
    // The shim and, as a node agent runs it, the CNI service for the node's namespace.
    const built = await buildCniShim(dataDir);
    if (!built.ok) throw new Error(`native kdp-cni: ${built.reason}`);
    const bridgeCache = buildBridgeCache();
    const ipSessions = buildIpSessionPool(nodeNs, { size: 2 });
    const svc = await serveCni({ socketDir: cniSocketDir(dataDir), netnsPath: `/run/netns/${nodeNs}`,
      run: (inv) => runCniPlugin(inv, { exec, node: { name: nodeNs }, bridgeCache, ipSessions }) });
    closers.push(() => { void svc.close(); ipSessions.close(); });
    return (env: Record<string, string>, c: unknown) =>
      spawnPlugin(built.file, nodeNs, { CNI_PATH: REF, CNI_IFNAME: 'eth0', ...env }, JSON.stringify(c));
  }
  // What the node agent keeps per node: the bridge state and running `ip -batch` sessions.
  const bridgeCache = buildBridgeCache();
  const ipSessions = impl === 'in-process' ? buildIpSessionPool(nodeNs, { warm: true }) : undefined;
  if (ipSessions) closers.push(() => ipSessions.close());
  return async (env: Record<string, string>, c: unknown): Promise<Outcome> => {
    const full = { CNI_PATH: REF, CNI_IFNAME: 'eth0', ...env };
    const stdin = JSON.stringify(c);
    if (impl === 'in-process') {
      const o = await runCniPlugin({ env: full, stdin }, { exec, node: { name: nodeNs }, bridgeCache, ipSessions });
      return { code: o.exitCode, stdout: o.stdout };
    }
    return spawnPlugin(impl === 'exec' ? KDP_CNI : join(REF, 'bridge'), nodeNs, full, stdin);
  };
}

async function timed(fn: () => Promise<Outcome>): Promise<[number, Outcome]> {
  const t = performance.now();
  const o = await fn();
  if (o.code !== 0) throw new Error(`plugin failed: ${o.stdout}`);
  return [performance.now() - t, o];
}

const med = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

interface Bench {
  readonly impl: Impl;
  readonly run: (env: Record<string, string>, c: unknown) => Promise<Outcome>;
  readonly newPod: () => Promise<string>;
  readonly conf: ReturnType<typeof conf>;
  readonly out: Record<string, number[]>;
}

async function setup(impl: Impl, idx: number): Promise<Bench> {
  const nodeNs = `${tag}-n${idx}`;
  await ensureNetns(exec, nodeNs);
  netnses.push(nodeNs);
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-bench-cni-'));
  dirs.push(dataDir);
  let podN = 0;
  const newPod = async () => {
    const p = `${tag}-${idx}p${podN++}`;
    await ensureNetns(exec, p);
    netnses.push(p);
    return p;
  };
  return { impl, run: await buildRunner(impl, nodeNs, dataDir), newPod, conf: conf(impl, dataDir, false, '10.250.0.0/16'), out: {} };
}

const env = (cmd: string, id: string, pod: string) =>
  ({ CNI_COMMAND: cmd, CNI_CONTAINERID: id, CNI_NETNS: `/run/netns/${pod}` });

function record(b: Bench, key: string, ms: number): void {
  (b.out[key] ??= []).push(ms);
}

/**
 * Every operation runs for each implementation in turn (interleaved), so a change in the
 * machine's load hits all of them alike; the ratios are what to read on a shared host.
 */
async function measureAll(benches: Bench[]): Promise<void> {
  const pods = new Map<Bench, string[]>();
  for (const b of benches) pods.set(b, await Promise.all(Array.from({ length: ROUNDS + 1 }, () => b.newPod())));
  for (const b of benches) record(b, 'first ADD', (await timed(() => b.run(env('ADD', 'first', pods.get(b)![0]!), b.conf)))[0]);
  for (const masq of [false, true]) {
    const suffix = masq ? ' ipMasq' : '';
    for (let i = 1; i <= ROUNDS; i++) {
      for (const b of benches) {
        const [cm, id, pod] = [{ ...b.conf, ipMasq: masq }, `c${masq ? 'm' : ''}${i}`, pods.get(b)![i]!];
        const [ms, o] = await timed(() => b.run(env('ADD', id, pod), cm));
        record(b, `ADD${suffix}`, ms);
        if (masq) continue;
        const check = { ...cm, prevResult: JSON.parse(o.stdout) };
        record(b, 'CHECK', (await timed(() => b.run(env('CHECK', id, pod), check)))[0]);
      }
    }
    for (let i = 1; i <= ROUNDS; i++) {
      for (const b of benches) {
        const [cm, id, pod] = [{ ...b.conf, ipMasq: masq }, `c${masq ? 'm' : ''}${i}`, pods.get(b)![i]!];
        record(b, `DEL${suffix}`, (await timed(() => b.run(env('DEL', id, pod), cm)))[0]);
      }
    }
  }
  for (const n of [10, 30]) {
    for (const b of benches) {
      const ps = await Promise.all(Array.from({ length: n }, () => b.newPod()));
      const t = performance.now();
      const os = await Promise.all(ps.map((p, i) => b.run(env('ADD', `par${n}-${i}`, p), b.conf)));
      record(b, `${n} parallel ADDs (wall)`, performance.now() - t);
      const ips = new Set(os.map((o) => JSON.parse(o.stdout).ips?.[0]?.address));
      if (os.some((o) => o.code !== 0) || ips.size !== n) throw new Error(`${b.impl}: parallel ADD failed`);
    }
  }
}

try {
  const impls = (process.argv[3] ?? 'in-process,exec,native,reference').split(',') as Impl[];
  if (!impls.includes('reference')) impls.push('reference');
  const benches: Bench[] = [];
  for (const [i, impl] of impls.entries()) benches.push(await setup(impl, i));
  const cpu0 = process.cpuUsage();
  await measureAll(benches);
  const cpu = process.cpuUsage(cpu0);
  const res: Record<string, Record<string, number>> = {};
  for (const b of benches) res[b.impl] = Object.fromEntries(Object.entries(b.out).map(([k, v]) => [k, med(v)]));
  console.log(`cni-add: wall-clock medians in ms over ${ROUNDS} rounds (load ${(await import('node:os')).loadavg()[0]!.toFixed(2)})`);
  const others = impls.filter((i) => i !== 'reference').map((i) => `${i}/ref`.padStart(12)).join('');
  console.log(`${'operation'.padEnd(26)}${impls.map((i) => i.padStart(12)).join('')}  ${others}`);
  for (const k of Object.keys(res.reference!)) {
    const vs = impls.map((i) => res[i]?.[k] ?? NaN);
    const r = res.reference![k]!;
    const ratios = impls.filter((i) => i !== 'reference').map((i) => (res[i]![k]! / r).toFixed(2).padStart(12));
    console.log(`${k.padEnd(26)}${vs.map((v) => v.toFixed(1).padStart(12)).join('')}  ${ratios.join('')}`);
  }
  console.log(`bench process CPU (in-process plugin + harness): ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
  const ratio = (res['in-process']?.ADD ?? NaN) / res.reference!.ADD!;
  console.log(`kdp-cni in-process ADD / reference ADD: ${ratio.toFixed(2)} (target ≤ 1.0; ` +
    `${ratio <= 1 ? 'MET' : 'MISSED'})`);
  if (res.native) {
    for (const op of ['ADD', 'CHECK', 'DEL']) {
      const r = res.native[op]! / res.reference![op]!;
      console.log(`kdp-cni native (exec'd) ${op} / reference ${op}: ${r.toFixed(2)} (target ≤ 1.0; ${r <= 1 ? 'MET' : 'MISSED'})`);
    }
  }
} finally {
  for (const c of closers) c();
  for (const n of netnses.reverse()) await deleteNetns(exec, n).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
