import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { buildKernelApplier } from '../../src/proxy/kernel-applier.js';
import { HostStateFile } from '../../src/host/state.js';
import { buildTopology } from '../../src/host/topology.js';

function topo() {
  const exec = buildRecordingExec();
  const state = new HostStateFile(join(mkdtempSync(join(tmpdir(), 'kdp-tf-')), 's.json'), 'kdp-abc123');
  return { exec, t: buildTopology({ exec, state, id: 'abc123' }) };
}

describe('host-gw route sync (recorded)', () => {
  it('adds missing peer routes, replaces a wrong gateway, deletes routes of peers gone, never its own', async () => {
    const { exec, t } = topo();
    exec.on((c) => c.args.includes('route') && c.args.includes('-j'), {
      stdout: JSON.stringify([
        { dst: 'default', gateway: '172.18.0.1' },
        { dst: '10.244.0.0/24', dev: 'cni0' },
        { dst: '10.244.1.0/24', gateway: '172.18.0.9' },
        { dst: '10.244.5.0/24', gateway: '172.18.0.7' },
      ]), stderr: '',
    });
    await t.syncRoutes('n1', [{ ips: ['172.18.0.3'], podCIDRs: ['10.244.1.0/24'] },
      { ips: ['172.18.0.4'], podCIDRs: ['10.244.2.0/24', 'fd00::/64'] }]);
    const batch = exec.calls.find((c) => c.args.includes('-batch'))!;
    expect(batch.args).toEqual(['-n', 'kdp-abc123-n1', '-batch', '-']);
    expect(batch.input!.trim().split('\n')).toEqual([
      'route del 10.244.5.0/24 via 172.18.0.7',
      'route replace 10.244.1.0/24 via 172.18.0.3 dev eth0',
      'route replace 10.244.2.0/24 via 172.18.0.4 dev eth0',
    ]);
  });

  it('does nothing when the routes are already right', async () => {
    const { exec, t } = topo();
    exec.on((c) => c.args.includes('route'), {
      stdout: JSON.stringify([{ dst: '10.244.1.0/24', gateway: '172.18.0.3' }]), stderr: '',
    });
    await t.syncRoutes('n1', [{ ips: ['172.18.0.3'], podCIDRs: ['10.244.1.0/24'] }]);
    expect(exec.calls.some((c) => c.args.includes('-batch'))).toBe(false);
  });
});

describe('kernel rule applier (recorded)', () => {
  const result = (full: boolean, kind: string, text: string) => ({ full, artifacts: [{ kind, text }], origins: new Map() });

  it('nftables: one nft -f per artifact inside the node namespace', async () => {
    const exec = buildRecordingExec();
    await buildKernelApplier(exec, 'kdp-x-n1', 'nftables').apply('IPv4', result(true, 'nft', 'add table ip kube-proxy\n'));
    expect(exec.lines()).toEqual(['[netns kdp-x-n1] nft -f -']);
    expect(exec.calls[0]!.input).toBe('add table ip kube-proxy\n');
  });

  it('iptables: a full sync ensures only the missing jumps after the restore', async () => {
    const exec = buildRecordingExec();
    exec.on((c) => c.file === 'iptables-save', {
      stdout: '*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n' +
        '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\nCOMMIT\n', stderr: '',
    });
    await buildKernelApplier(exec, 'kdp-x-n1', 'iptables').apply('IPv4', result(true, 'iptables-restore', '*nat\nCOMMIT\n'));
    expect(exec.lines()).toEqual([
      '[netns kdp-x-n1] iptables-restore -w 5 --noflush --counters',
      '[netns kdp-x-n1] iptables-save',
      '[netns kdp-x-n1] iptables-restore -w 5 --noflush --counters',
    ]);
    const jumps = exec.calls[2]!.input!;
    expect(jumps).toContain('-I OUTPUT 1 -m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
    expect(jumps).not.toContain('-I PREROUTING');
    // Declaring a chain flushes it: KUBE-SERVICES exists in nat, so nat must not declare it.
    expect(jumps.split('*nat')[1]).not.toContain(':KUBE-SERVICES');
    expect(jumps.split('*nat')[1]).toContain(':KUBE-POSTROUTING - [0:0]');
  });

  it('a failed apply throws KDP_HOST_EXEC', async () => {
    const exec = buildRecordingExec();
    exec.on((c) => c.file === 'nft', { fail: 'Error: syntax error' });
    const err = await buildKernelApplier(exec, 'kdp-x-n1', 'nftables')
      .apply('IPv4', result(false, 'nft', 'bogus\n')).catch((e) => e);
    expect(isKdpError(err, 'KDP_HOST_EXEC')).toBe(true);
  });
});
