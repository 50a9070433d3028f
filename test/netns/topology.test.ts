import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { listNetns } from '../../src/host/netns.js';
import { HostStateFile } from '../../src/host/state.js';
import { buildTopology, clusterId, loadTopology, nodeIP, type Topology } from '../../src/host/topology.js';
import { canUseNetns } from '../helpers/root.js';

describe('topology data', () => {
  it('places node i at 172.18.0.(i+2) on the underlay', () => {
    const spec = loadTopology();
    expect([0, 1, 2].map((i) => nodeIP(spec, i))).toEqual(['172.18.0.2', '172.18.0.3', '172.18.0.4']);
    expect(spec.clusterCIDR).toBe('10.244.0.0/16');
  });

  it('gives two data dirs two different cluster ids', () => {
    expect(clusterId('/a/.kdp')).not.toBe(clusterId('/b/.kdp'));
    expect(clusterId('/a/.kdp')).toMatch(/^[0-9a-f]{6}$/);
  });
});

describe.runIf(canUseNetns(['ip', 'iptables-restore', 'ping']))('topology in the kernel', () => {
  const exec = buildHostExec();
  const dir = mkdtempSync(join(tmpdir(), 'kdp-topo-'));
  const statePath = join(dir, 'host-state.json');
  let topo: Topology;

  beforeAll(async () => {
    topo = buildTopology({ exec, state: new HostStateFile(statePath, ''), id: clusterId(dir) });
    await topo.ensureUnderlay();
    await topo.ensureNodeNetns({ name: 'n1', ip: '172.18.0.2' });
    await topo.ensureNodeNetns({ name: 'n2', ip: '172.18.0.3' });
  });

  afterAll(async () => {
    if (topo) await cleanupHost(exec, statePath, topo.prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('records every namespace in the state file and is idempotent', async () => {
    await topo.ensureUnderlay();
    await topo.ensureNodeNetns({ name: 'n1', ip: '172.18.0.2' });
    const state = new HostStateFile(statePath, topo.prefix).current;
    expect(state.netns.sort()).toEqual([`${topo.prefix}-n1`, `${topo.prefix}-n2`, `${topo.prefix}-underlay`]);
  });

  it('joins the nodes on the underlay: node 1 reaches node 2', async () => {
    const { stdout } = await exec.run('ping', ['-c', '1', '-W', '2', '172.18.0.3'], { netns: topo.nodeNetns('n1') });
    expect(stdout).toContain('1 received');
  });

  it('keeps host-gw routes equal to the peers, removing routes of peers gone', async () => {
    const ns = topo.nodeNetns('n1');
    await topo.syncRoutes('n1', [{ ips: ['172.18.0.3'], podCIDRs: ['10.244.1.0/24'] },
      { ips: ['172.18.0.4'], podCIDRs: ['10.244.2.0/24'] }]);
    let routes = (await exec.run('ip', ['-n', ns, 'route', 'show'])).stdout;
    expect(routes).toContain('10.244.1.0/24 via 172.18.0.3 dev eth0');
    expect(routes).toContain('10.244.2.0/24 via 172.18.0.4 dev eth0');
    await topo.syncRoutes('n1', [{ ips: ['172.18.0.3'], podCIDRs: ['10.244.1.0/24'] }]);
    routes = (await exec.run('ip', ['-n', ns, 'route', 'show'])).stdout;
    expect(routes).toContain('10.244.1.0/24 via 172.18.0.3 dev eth0');
    expect(routes).not.toContain('10.244.2.0/24');
  });

  it('masquerades only traffic leaving the cluster CIDR', async () => {
    const nat = (await exec.run('iptables-save', ['-t', 'nat'], { netns: topo.nodeNetns('n1') })).stdout;
    expect(nat).toMatch(/-A KDP-MASQ -d 10\.244\.0\.0\/16 .*-j RETURN\n-A KDP-MASQ -j MASQUERADE/);
    expect(nat.match(/-A POSTROUTING .*-j KDP-MASQ/g)).toHaveLength(1);
  });

  it('leaves no namespace of the cluster after cleanup', async () => {
    await cleanupHost(exec, statePath, topo.prefix);
    expect((await listNetns(exec)).filter((n) => n.startsWith(topo.prefix))).toEqual([]);
  });
});
