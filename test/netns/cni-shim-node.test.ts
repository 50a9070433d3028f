// A netns data plane serves the native kdp-cni from each node's namespace: a runtime that execs
// `<data-dir>/bin/cni/kdp-cni` there gets its ADD answered by that node's agent (not by a Node
// start), with the node's own bridge and the cluster's IPAM dir layout.

import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNetnsDataPlane, type NetnsDataPlane } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { execPlugin } from '../../src/cni/exec-plugin.js';
import { cniBinDir, cniSocketDir } from '../../src/cni/shim-build.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { hasCompiler } from '../helpers/native.js';
import { waitFor } from '../helpers/cluster.js';

const exec = buildHostExec();
const pod = `${testNetnsName()}-shp`;

/** Execs the plugin in `netns` as a runtime does (the product's own execPlugin). */
async function runIn(netns: string, file: string, env: Record<string, string>, stdin: string) {
  const o = await execPlugin({ command: [file], env, stdin, netns, timeoutMs: 30_000 });
  return { code: o.exitCode, stdout: o.stdout };
}

describe.runIf(hasCompiler() && canUseNetns(['ip', 'nsenter']))('the native kdp-cni in a netns data plane (root)', () => {
  let dir = '';
  let plane: NetnsDataPlane;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kdp-shim-plane-'));
    plane = await startNetnsDataPlane(dataDirPaths(dir), exec);
    await plane.startNode({ name: 'n1', ip: '172.18.0.2' }, 'iptables');
    await ensureNetns(exec, pod);
  }, 60_000);
  afterAll(async () => {
    await deleteNetns(exec, pod).catch(() => undefined);
    await plane?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each node agent listens for its namespace; the shim\'s ADD and DEL are answered there', async () => {
    const nodeNs = plane.topo.nodeNetns('n1');
    const sock = join(cniSocketDir(dir), `${statSync(`/run/netns/${nodeNs}`).ino}.sock`);
    expect(existsSync(sock)).toBe(true);
    expect(statSync(sock).mode & 0o777).toBe(0o600);
    const shim = join(cniBinDir(dir), 'kdp-cni');
    await waitFor(() => existsSync(shim), 60_000, 'the native kdp-cni built in the background');
    const conf = JSON.stringify({ cniVersion: '1.0.0', name: 'shimtest', type: 'kdp-cni', bridge: 'kdpshim0', isGateway: true,
      ipam: { type: 'host-local', dataDir: join(dir, 'ipam-shim'), ranges: [[{ subnet: '10.77.0.0/24' }]], routes: [{ dst: '0.0.0.0/0' }] } });
    const env = (cmd: string) => ({ CNI_COMMAND: cmd, CNI_CONTAINERID: 'shim1', CNI_NETNS: `/run/netns/${pod}`,
      CNI_IFNAME: 'eth0', CNI_PATH: cniBinDir(dir) });
    const add = await runIn(nodeNs, shim, env('ADD'), conf);
    expect(add.code, add.stdout).toBe(0);
    expect(JSON.parse(add.stdout).ips[0].address).toBe('10.77.0.2/24');
    const { stdout } = await exec.run('ip', ['netns', 'exec', nodeNs, 'ip', '-o', 'link', 'show', 'kdpshim0']);
    expect(stdout).toContain('kdpshim0');
    const del = await runIn(nodeNs, shim, env('DEL'), conf);
    expect(del.code, del.stdout).toBe(0);
    const links = await exec.run('ip', ['netns', 'exec', pod, 'ip', '-o', 'link', 'show']);
    expect(links.stdout).not.toContain('eth0');
  });
});
