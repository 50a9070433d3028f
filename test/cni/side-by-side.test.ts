import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { bridgeConf, cniEnv, invoke } from '../helpers/cni.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

// The same config through kdp-cni and through the reference bridge + host-local (Debian's
// containernetworking-plugins), each in its own node namespace: the results must be equivalent
// (same addresses, gateway, routes, interface roles and sandbox) and so must the stores.
const REF = '/usr/lib/cni';
const run = canUseNetns(['ip', 'nsenter']) && existsSync(join(REF, 'bridge'));
if (!existsSync(join(REF, 'bridge')) && process.env.CI === 'true') throw new Error('CI=true but the reference CNI plugins are missing');
const exec = buildHostExec();
const prefix = testNetnsName();

async function reference(nodeNs: string, env: Record<string, string>, conf: unknown) {
  const r = spawnSync('ip', ['netns', 'exec', nodeNs, join(REF, 'bridge')], {
    env: { ...process.env, ...env, CNI_PATH: REF }, input: JSON.stringify(conf), encoding: 'utf8', timeout: 30_000,
  });
  return { exitCode: r.status ?? 1, json: r.stdout ? JSON.parse(r.stdout) : undefined };
}

/** What must agree: interface roles, addresses, gateways, routes, dns — not names or MACs. */
function shape(r: any) {
  return {
    cniVersion: r.cniVersion,
    interfaces: r.interfaces.map((i: any) => ({ hasMac: typeof i.mac === 'string', sandbox: i.sandbox !== undefined })),
    ips: r.ips,
    routes: r.routes,
    dns: r.dns,
  };
}

describe.runIf(run)('kdp-cni side by side with the reference bridge + host-local (root)', () => {
  const dirs = { kdp: '', ref: '' };
  const ns = { kdpNode: `${prefix}-kn`, refNode: `${prefix}-rn`, kdpPod: `${prefix}-kp`, refPod: `${prefix}-rp` };

  beforeAll(async () => {
    dirs.kdp = mkdtempSync(join(tmpdir(), 'kdp-sbs-k-'));
    dirs.ref = mkdtempSync(join(tmpdir(), 'kdp-sbs-r-'));
    for (const n of Object.values(ns)) await ensureNetns(exec, n);
  });

  afterAll(async () => {
    for (const n of Object.values(ns)) await deleteNetns(exec, n);
    rmSync(dirs.kdp, { recursive: true, force: true });
    rmSync(dirs.ref, { recursive: true, force: true });
  });

  it('ADD gives equivalent results and the same host-local store; DEL empties both', async () => {
    const conf = (dataDir: string) => bridgeConf({ bridge: 'kdp-sbs0', ipMasq: false }, { dataDir });
    const env = (pod: string) => cniEnv('ADD', { CNI_CONTAINERID: 'sbs1', CNI_NETNS: `/run/netns/${pod}` });
    const mine = await invoke(exec, ns.kdpNode, env(ns.kdpPod), conf(dirs.kdp));
    const ref = await reference(ns.refNode, env(ns.refPod), conf(dirs.ref));
    expect(mine.exitCode, mine.stdout).toBe(0);
    expect(ref.exitCode, JSON.stringify(ref.json)).toBe(0);
    expect(shape(mine.json)).toEqual(shape(ref.json));
    const store = (d: string) => readdirSync(join(d, 'kdptest')).filter((f) => f !== 'lock' && f !== 'lock.owner').sort()
      .map((f) => [f, readFileSync(join(d, 'kdptest', f), 'utf8')]);
    expect(store(dirs.kdp)).toEqual(store(dirs.ref));

    const del = (pod: string) => cniEnv('DEL', { CNI_CONTAINERID: 'sbs1', CNI_NETNS: `/run/netns/${pod}` });
    expect((await invoke(exec, ns.kdpNode, del(ns.kdpPod), conf(dirs.kdp))).exitCode).toBe(0);
    expect((await reference(ns.refNode, del(ns.refPod), conf(dirs.ref))).exitCode).toBe(0);
    const ips = (d: string) => readdirSync(join(d, 'kdptest')).filter((f) => /^\d/.test(f) && !f.startsWith('last'));
    expect(ips(dirs.kdp)).toEqual([]);
    expect(ips(dirs.ref)).toEqual([]);
  });

  it('exhausting a /30 gives the same error in both', async () => {
    const conf = (dataDir: string) => bridgeConf({ name: 'kdpsmall', bridge: 'kdp-sbs1' }, { dataDir, ranges: [[{ subnet: '10.245.0.0/30' }]] });
    const add = (pod: string, id: string) => cniEnv('ADD', { CNI_CONTAINERID: id, CNI_NETNS: `/run/netns/${pod}`, CNI_IFNAME: id === 'a' ? 'eth0' : 'eth1' });
    expect((await invoke(exec, ns.kdpNode, add(ns.kdpPod, 'a'), conf(dirs.kdp))).exitCode).toBe(0);
    expect((await reference(ns.refNode, add(ns.refPod, 'a'), conf(dirs.ref))).exitCode).toBe(0);
    const mine = await invoke(exec, ns.kdpNode, add(ns.kdpPod, 'b'), conf(dirs.kdp));
    const ref = await reference(ns.refNode, add(ns.refPod, 'b'), conf(dirs.ref));
    expect(mine.json).toEqual(ref.json);
    expect(mine.json.msg).toBe('failed to allocate for range 0: no IP addresses available in range set: 10.245.0.1-10.245.0.2');
  });
});
