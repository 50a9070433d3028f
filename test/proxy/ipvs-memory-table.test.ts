// Virtual mode's ipvs table is FakeIpvs (host/fake-ipvsadm.ts) driven by `ipvsadm -R`, the model
// the fake rule tools answer `ipvsadm` with: every scenario's state reads back unchanged, the
// memory dump equals what `ipvsadm -Sn` shows after the same restore through the fake tools, and
// a line ipvsadm refuses fails the apply with ipvsadm's exit status and message while the table
// keeps what it held.

import { describe, expect, it } from 'vitest';
import type { SyncResult } from '../../src/proxy/backend.js';
import { buildMemoryApplier } from '../../src/proxy/applier.js';
import * as ipvs from '../../src/proxy/ipvs/proxier.js';
import { buildFakeRuleTools } from '../../src/host/fake-rule-tools.js';
import { listScenarios, loadScenario, runSequence } from '../helpers/scenarios.js';

const result = (ipvsText: string, ipset = ''): SyncResult => ({
  full: true, origins: new Map(),
  artifacts: [{ kind: 'ipvs', text: ipvsText }, { kind: 'ipset', text: ipset },
    { kind: 'iptables-restore', text: '' }, { kind: 'kube-ipvs0', text: '' }],
});
const WEB = '-A -t 10.96.0.10:80 -s rr\n-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1\n';

describe('the ipvs in-memory table', () => {
  it('holds every scenario\'s state, step by step, as the proxier compiled it', async () => {
    for (const name of listScenarios()) {
      const a = buildMemoryApplier('ipvs');
      for (const { result: r } of runSequence(loadScenario(name), 'ipvs', ipvs).results) {
        await a.apply('IPv4', r);
        expect(await a.dump('IPv4'), name).toBe(r.artifacts.map(ipvs.canonicalize).join(''));
      }
    }
  });

  it('holds what `ipvsadm -Sn` shows after the same `ipvsadm -R` through the fake tools', async () => {
    const tools = buildFakeRuleTools();
    await tools.run('ipvsadm', ['-R'], { netns: 'n1', input: WEB });
    const a = buildMemoryApplier('ipvs');
    await a.apply('IPv4', result(WEB));
    expect(await a.dump('IPv4')).toBe(`### ipvsadm -Sn\n${(await tools.run('ipvsadm', ['-Sn'], { netns: 'n1' })).stdout}` +
      '### ipset save\n### iptables-restore\n### kube-ipvs0\n');
  });

  it('refuses a service added twice as ipvsadm does, keeping the table it held', async () => {
    const a = buildMemoryApplier('ipvs');
    await a.apply('IPv4', result(WEB, 'create KUBE-CLUSTER-IP hash:ip,port\n'));
    const before = await a.dump('IPv4');
    await expect(a.apply('IPv4', result(`${WEB}-A -t 10.96.0.10:80 -s rr\n`)))
      .rejects.toThrow('ipvsadm -R failed (255): Service already exists');
    expect(await a.dump('IPv4')).toBe(before);
  });

  it('refuses an unknown scheduler and an unreadable address with ipvsadm\'s exit status', async () => {
    const a = buildMemoryApplier('ipvs');
    await expect(a.apply('IPv4', result('-A -t 10.96.0.11:80 -s nosuch\n')))
      .rejects.toThrow('ipvsadm -R failed (255): Scheduler or persistence engine not found');
    await expect(a.apply('IPv4', result('-A -t 10.96.0.300:80 -s rr\n')))
      .rejects.toThrow('ipvsadm -R failed (2): illegal virtual server address[:port] specified');
    expect(await a.dump('IPv4')).toBe('');
  });
});

describe('the ipvs in-memory table\'s iptables rules', () => {
  it('are applied as iptables-restore --noflush: a jump to a missing chain fails the apply and keeps the table', async () => {
    const a = buildMemoryApplier('ipvs');
    const good = '*nat\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -j KUBE-SERVICES\nCOMMIT\n';
    await a.apply('IPv4', { ...result(WEB), artifacts: [{ kind: 'ipvs', text: WEB },
      { kind: 'iptables-restore', text: good }] });
    const before = await a.dump('IPv4');
    expect(before).toContain(`### iptables-restore\n${good}`);
    const bad = '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j KUBE-MISSING\nCOMMIT\n';
    await expect(a.apply('IPv4', { ...result(WEB), artifacts: [{ kind: 'ipvs', text: WEB },
      { kind: 'iptables-restore', text: bad }] })).rejects.toThrow(/iptables-restore.*failed \(2\).*KUBE-MISSING/s);
    expect(await a.dump('IPv4')).toBe(before);
  });
});
