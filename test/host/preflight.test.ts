import { describe, expect, it } from 'vitest';
import { chooseDataPlane } from '../../src/cli/commands/up.js';
import { installHint, preflightChecks, preflightFailures, renderChecks, type PreflightHost } from '../../src/host/preflight.js';
import { main } from '../../src/cli/main.js';
import { captureIO, kdp } from '../helpers/cli.js';

/** Captured output with this environment (PATH decides what preflight finds). */
function ioWith(env: NodeJS.ProcessEnv) {
  const io = captureIO();
  Object.assign(io, { env });
  return io;
}

const host = (o: Partial<PreflightHost> & { missing?: string[] } = {}): PreflightHost => ({
  isRoot: o.isRoot ?? true,
  which: (p) => (o.missing?.includes(p) ? undefined : `/usr/sbin/${p}`),
  kernelHas: o.kernelHas ?? (() => true),
});

describe('netns preflight', () => {
  it('a machine with everything passes; optional gaps never block', () => {
    const checks = preflightChecks(host({ missing: ['tcpdump', 'cc'] }));
    expect(preflightFailures(checks)).toEqual([]);
    expect(renderChecks(checks)).toMatch(/tcpdump +missing \(optional\) +not found on PATH .* — package tcpdump/);
  });

  it('each missing program names the package that provides it, once per package', () => {
    const failed = preflightFailures(preflightChecks(host({ missing: ['nft', 'iptables-restore', 'iptables-save', 'conntrack'] })));
    expect(failed.map((c) => [c.name, c.pkg])).toEqual([['nft', 'nftables'], ['iptables-restore', 'iptables'],
      ['iptables-save', 'iptables'], ['conntrack', 'conntrack']]);
    expect(installHint(failed)).toBe('apt-get install -y nftables iptables conntrack');
  });

  it('not root, or a kernel without nf_tables, fails; an unknown kernel feature does not', () => {
    expect(preflightFailures(preflightChecks(host({ isRoot: false }))).map((c) => c.name)).toEqual(['root']);
    expect(preflightFailures(preflightChecks(host({ kernelHas: (m) => m !== 'nf_tables' }))).map((c) => c.name))
      .toEqual(['kernel nf_tables']);
    expect(preflightFailures(preflightChecks(host({ kernelHas: () => undefined })))).toEqual([]);
  });
});

describe.runIf(process.getuid?.() === 0)('kdp up chooses its data plane before creating anything (root)', () => {
  it('without the programs netns mode needs: virtual mode, saying which packages would enable netns mode', async () => {
    const io = ioWith({ PATH: '/nonexistent' });
    expect(await chooseDataPlane({}, io)).toBe('virtual');
    expect(io.stderr).toContain('kdp: root, but netns mode needs ip (package iproute2), nsenter (package util-linux)');
    expect(io.stderr).toContain('For netns mode: apt-get install -y iproute2 util-linux procps nftables iptables conntrack.');
  });

  it('--netns makes the same gap an error; --netns --virtual is refused', async () => {
    const io = ioWith({ PATH: '/nonexistent' });
    await expect(chooseDataPlane({ netns: true }, io)).rejects.toThrow(/--netns: netns mode needs ip \(package iproute2\).*install with: apt-get install -y iproute2/);
    await expect(chooseDataPlane({ netns: true, virtual: true }, io)).rejects.toThrow('--netns and --virtual: choose one');
    const io2 = ioWith(process.env);
    expect(await chooseDataPlane({}, io2)).toBe('netns');
  });

  it('kdp doctor exits 0 here and 1 without the programs', async () => {
    const here = ioWith(process.env);
    expect(await main(['doctor', '-o', 'json'], here)).toBe(0);
    expect(JSON.parse(here.stdout).netnsMode).toBe(true);
    const r = await kdp('doctor'); // an empty environment: no PATH
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^nft +MISSING +not found on PATH .* — package nftables$/m);
    expect(r.out).toContain('netns mode: not possible here (ip, nsenter, sysctl, nft, iptables-restore, ' +
      'iptables-save, ip6tables-restore, conntrack); kdp up runs virtual mode\nfix: apt-get install -y ');
  });
});
