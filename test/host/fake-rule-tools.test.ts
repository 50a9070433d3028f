// The fakes of the rule-table tools fail as the tools do. Where root and the tools are here,
// each refused input goes to the real iptables-restore / nft in a namespace this test creates
// and to the fake, and the two KDP_HOST_EXEC messages (command, exit status, stderr) must be
// the same. ipvsadm cannot run here (kdp never loads IP_VS): its fake is held to ipvsadm.c's
// behaviour, written out below.

import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHostExec, type HostExec } from '../../src/host/exec.js';
import { FakeIpvs } from '../../src/host/fake-ipvsadm.js';
import { buildFakeRuleTools } from '../../src/host/fake-rule-tools.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const RESTORE = ['-w', '5', '--noflush', '--counters'];

/** Refused iptables-restore inputs, each after `SETUP` (which both sides accept). */
const SETUP = '*filter\n:KUBE-A - [0:0]\n:KUBE-B - [0:0]\n-A KUBE-B -j KUBE-A\n-A KUBE-A -j ACCEPT\nCOMMIT\n';
const REFUSED_IPTABLES: ReadonlyArray<[string, string]> = [
  ['a rule in a missing chain', '*filter\n-A KUBE-NOWHERE -j ACCEPT\nCOMMIT\n'],
  ['a jump to a missing chain (reported at COMMIT)', '*filter\n:KUBE-C - [0:0]\n-A KUBE-C -j KUBE-NOWHERE\n-A KUBE-C -j ACCEPT\nCOMMIT\n'],
  ['-X of a missing chain', '*filter\n-X KUBE-NOWHERE\nCOMMIT\n'],
  ['-X of a chain in use', '*filter\n-X KUBE-A\nCOMMIT\n'],
  ['-D of a rule that is not there', '*filter\n-D KUBE-A -j DROP\nCOMMIT\n'],
  ['a table without COMMIT', '*filter\n:KUBE-C - [0:0]\n'],
];
const REFUSED_NFT: ReadonlyArray<[string, string]> = [
  ['a rule in a missing chain', 'add table ip kube-proxy\nadd chain ip kube-proxy a\n\nadd rule ip kube-proxy nowhere accept\n'],
  ['a chain in a missing table', 'add chain ip nowhere a\n'],
];

/** The message with the tool's version (the only part that differs between releases) cut. */
const message = (p: Promise<unknown>) => p.then(() => 'accepted', (e: Error) =>
  e.message.replace(/ v\d+\.\d+\.\d+ \(nf_tables\)/g, ' vX (nf_tables)'));

/** nft's first line without its column range (the fake marks the whole line). */
const nftError = (m: string) => m.split('\n')[0]!.replace(/(\/dev\/stdin:\d+):\d+-\d+:/, '$1:');

function bothSides(exec: () => HostExec, ns: string) {
  return async (file: string, args: readonly string[], setup: string, input: string) => {
    const out: string[] = [];
    for (const e of [exec(), buildFakeRuleTools()]) {
      if (setup) await e.run(file, args, { netns: ns, input: setup });
      out.push(await message(e.run(file, args, { netns: ns, input })));
      if (file === 'nft') await e.run('nft', ['-f', '-'], { netns: ns, input: 'flush ruleset\n' }).catch(() => undefined);
    }
    return out as [string, string];
  };
}

const ok = canUseNetns(['ip', 'iptables-restore', 'nft']);
const ns = testNetnsName();

describe.runIf(ok)('fake rule tools fail as the real ones (netns)', () => {
  let realExec: HostExec;
  beforeAll(() => {
    execFileSync('ip', ['netns', 'add', ns]);
    realExec = buildHostExec();
  });
  afterAll(() => { spawnSync('ip', ['netns', 'del', ns]); });
  const fresh = () => {
    // A fresh filter table for each case on the real side, as the fake starts empty.
    spawnSync('ip', ['netns', 'exec', ns, 'iptables', '-F']);
    spawnSync('ip', ['netns', 'exec', ns, 'iptables', '-X']);
    return realExec;
  };

  it.each(REFUSED_IPTABLES)('iptables-restore: %s', async (_name, input) => {
    const [real, fake] = await bothSides(fresh, ns)('iptables-restore', RESTORE, SETUP, input);
    expect(real).not.toBe('accepted');
    expect(fake).toBe(real);
  });

  it.each(REFUSED_NFT)('nft -f -: %s', async (_name, input) => {
    const [real, fake] = await bothSides(() => realExec, ns)('nft', ['-f', '-'], '', input);
    expect(real).toMatch(/failed \(1\)/);
    expect(nftError(fake)).toBe(nftError(real));
  });

  it('nft list of a missing table', async () => {
    const [real, fake] = await Promise.all([realExec, buildFakeRuleTools()].map((e) =>
      message(e.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: ns }))));
    expect(fake).toBe(real);
  });
});

describe('fake rule tools', () => {
  it('keep each namespace and family apart, and answer save/list from what was applied', async () => {
    const t = buildFakeRuleTools();
    await t.run('iptables-restore', RESTORE, { netns: 'a', input: SETUP });
    await t.run('nft', ['-f', '-'], { netns: 'b', input: 'add table ip kube-proxy\nadd chain ip kube-proxy x\n' });
    expect((await t.run('iptables-save', ['-t', 'filter'], { netns: 'a' })).stdout).toContain('-A KUBE-B -j KUBE-A');
    expect((await t.run('iptables-save', [], { netns: 'b' })).stdout).toBe('');
    expect((await t.run('ip6tables-save', [], { netns: 'a' })).stdout).toBe('');
    expect((await t.run('nft', ['list', 'tables', 'ip'], { netns: 'b' })).stdout).toBe('table ip kube-proxy\n');
    await expect(t.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: 'a' })).rejects.toThrow(/failed \(1\): Error: No such file or directory/);
  });

  it('a refused restore changes nothing', async () => {
    const t = buildFakeRuleTools();
    await t.run('iptables-restore', RESTORE, { netns: 'a', input: SETUP });
    const before = t.iptables('a').save();
    await expect(t.run('iptables-restore', RESTORE, { netns: 'a', input: '*filter\n:KUBE-A - [0:0]\n-A KUBE-A -j KUBE-NOWHERE\nCOMMIT\n' }))
      .rejects.toThrow(/^\[netns a\] iptables-restore -w 5 --noflush --counters failed \(2\): iptables-restore v1\.8\.9 \(nf_tables\): Chain 'KUBE-NOWHERE' does not exist\nError occurred at line: 4/);
    expect(t.iptables('a').save()).toBe(before);
  });

  it('any other program fails as a missing one', async () => {
    await expect(buildFakeRuleTools().run('ipset', ['restore'], { netns: 'a' }))
      .rejects.toThrow('[netns a] ipset restore failed (ENOENT): spawn ipset ENOENT');
  });
});

describe('fake ipvsadm -R fails as ipvsadm 1.31 does', () => {
  const base = '-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.1:443 -r 10.244.1.5:6443 -m -w 1\n';

  it('applies and saves as ipvsadm -Sn', () => {
    const v = new FakeIpvs();
    expect(v.restore(base)).toEqual({ exitCode: 0, stderr: '' });
    expect(v.save()).toBe(base);
  });

  it('a refused operation prints libipvs\'s message and the run goes on; the status is the last line\'s', () => {
    const v = new FakeIpvs();
    expect(v.restore(`${base}-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.2:80 -r 10.244.1.6:80 -m -w 1\n`))
      .toEqual({ exitCode: 255, stderr: 'Service already exists\nService not defined\n' });
    expect(v.restore('-A -t 10.96.0.1:443 -s rr\n-A -t 10.96.0.3:53 -s rr\n'))
      .toEqual({ exitCode: 0, stderr: 'Service already exists\n' });
    expect(v.save()).toContain('-A -t 10.96.0.3:53 -s rr');
    const missing = new FakeIpvs();
    expect(missing.restore('-d -t 10.96.0.1:443 -r 10.244.1.5:6443\n').stderr).toBe('Service not defined\n');
    missing.restore(base);
    expect(missing.restore('-d -t 10.96.0.1:443 -r 10.244.1.9:6443\n')).toEqual({ exitCode: 255, stderr: 'No such destination\n' });
    expect(missing.restore('-a -t 10.96.0.1:443 -r 10.244.1.5:6443 -m -w 1\n').stderr).toBe('Destination already exists\n');
    expect(missing.restore('-E -t 10.9.9.9:1 -s rr\n').stderr).toBe('No such service\n');
    expect(missing.restore('-A -t 10.9.9.9:1 -s nosuch\n').stderr).toBe('Scheduler or persistence engine not found\n');
  });

  it('an unreadable line ends the run with exit 2; the lines before it stay', () => {
    const v = new FakeIpvs();
    expect(v.restore(`${base}-A -t 999.1.1.1:80 -s rr\n-A -t 10.96.0.9:80 -s rr\n`))
      .toEqual({ exitCode: 2, stderr: 'illegal virtual server address[:port] specified\n' });
    expect(v.save()).toBe(base);
    expect(new FakeIpvs().restore(`${base}-a -t 10.96.0.1:443 -r 10.244.1.6:80 -m -w x\n`).exitCode).toBe(2);
  });

  it('through the fake tools: a failed restore is KDP_HOST_EXEC with the status', async () => {
    const t = buildFakeRuleTools();
    await t.run('ipvsadm', ['-R'], { input: base });
    await expect(t.run('ipvsadm', ['-R'], { input: '-D -t 10.96.0.7:1\n' })).rejects.toThrow('ipvsadm -R failed (255): No such service');
    expect((await t.run('ipvsadm', ['-Sn'])).stdout).toBe(base);
  });
});
