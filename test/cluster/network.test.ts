import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upCommand } from '../../src/cli/commands/up.js';
import { parseFlags } from '../../src/cli/flags.js';
import { nodeSpecs } from '../../src/cluster/node-set.js';
import { resolveClusterNetwork } from '../../src/cluster/network.js';

describe('kdp up network flags', () => {
  it('defaults to IPv4 10.244.0.0/16 and 10.96.0.0/12', () => {
    expect(resolveClusterNetwork()).toEqual({ ipFamily: 'ipv4', families: ['IPv4'],
      clusterCIDRs: ['10.244.0.0/16'], nodeCIDRMaskSizes: [24], serviceCIDRs: ['10.96.0.0/12'] });
  });

  it('--ip-family ipv6 and dual take kind\'s IPv6 ranges, IPv4 first in dual', () => {
    expect(resolveClusterNetwork({ ipFamily: 'ipv6' })).toMatchObject({
      clusterCIDRs: ['fd00:10:244::/56'], nodeCIDRMaskSizes: [64], serviceCIDRs: ['fd00:10:96::/112'] });
    expect(resolveClusterNetwork({ ipFamily: 'dual' })).toMatchObject({
      families: ['IPv4', 'IPv6'], clusterCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'],
      serviceCIDRs: ['10.96.0.0/12', 'fd00:10:96::/112'] });
  });

  it('an IPv6-first --cluster-cidr makes IPv6 the primary family of the default service ranges', () => {
    expect(resolveClusterNetwork({ clusterCIDR: 'fd00:1::/56,10.1.0.0/16' })).toMatchObject({
      ipFamily: 'dual', families: ['IPv6', 'IPv4'], nodeCIDRMaskSizes: [64, 24],
      serviceCIDRs: ['fd00:10:96::/112', '10.96.0.0/12'] });
  });

  it('orders --ip-family dual by the service CIDRs when no cluster CIDR is given', () => {
    expect(resolveClusterNetwork({ ipFamily: 'dual', serviceCIDR: 'fd00:10:96::/112,10.96.0.0/12' }))
      .toMatchObject({ families: ['IPv6', 'IPv4'], clusterCIDRs: ['fd00:10:244::/56', '10.244.0.0/16'] });
    expect(resolveClusterNetwork({ ipFamily: 'dual' }).families).toEqual(['IPv4', 'IPv6']);
  });

  it.each([
    [{ ipFamily: 'ipv5' }, '--ip-family: "ipv5" is not one of ipv4, ipv6, dual'],
    [{ ipFamily: 'dual', clusterCIDR: '10.1.0.0/16' }, '--ip-family dual: --cluster-cidr 10.1.0.0/16 is ipv4'],
    [{ serviceCIDR: '10.96.0.0/12,10.97.0.0/16' }, 'dual-stack ranges must be of different IP families'],
    [{ ipFamily: 'ipv6', serviceCIDR: 'fd00::/64' },
      'specified --service-cluster-ip-range is too large; for 128-bit addresses, the mask must be >= 108'],
    [{ clusterCIDR: '10.1.0.0/16', serviceCIDR: 'fd00::/112' }, 'the cluster CIDR has no IPv6 range'],
  ])('rejects %j', (flags, message) => {
    expect(() => resolveClusterNetwork(flags)).toThrow(message);
  });

  it('gives nodes an IPv6 underlay address and InternalIPs in family order', () => {
    expect(nodeSpecs(2, ['IPv6', 'IPv4'])).toEqual([
      { name: 'n1', ip: '172.18.0.2', ip6: 'fc00:f853:ccd:e793::2', ips: ['fc00:f853:ccd:e793::2', '172.18.0.2'] },
      { name: 'n2', ip: '172.18.0.3', ip6: 'fc00:f853:ccd:e793::3', ips: ['fc00:f853:ccd:e793::3', '172.18.0.3'] },
    ]);
    expect(nodeSpecs(1)).toEqual([{ name: 'n1', ip: '172.18.0.2' }]);
  });

  it('kdp up reads the same settings from its --config file (flags win)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-netcfg-'));
    try {
      const file = join(dir, 'up.yaml');
      writeFileSync(file, 'ip-family: dual\nservice-cidr: 10.96.0.0/16,fd00:10:96::/112\nnodes: 3\n');
      const { flags } = parseFlags(['--config', file, '--nodes', '2'], upCommand.flags!);
      expect(flags).toMatchObject({ 'ip-family': 'dual', 'service-cidr': '10.96.0.0/16,fd00:10:96::/112', nodes: 2 });
      expect(resolveClusterNetwork({ ipFamily: flags['ip-family'] as string,
        serviceCIDR: flags['service-cidr'] as string }).serviceCIDRs).toEqual(['10.96.0.0/16', 'fd00:10:96::/112']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
