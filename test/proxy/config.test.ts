import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { buildProxierConfigs, parseGoDuration, parseKubeProxyConfiguration }
  from '../../src/proxy/config.js';

const HEAD = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';

function configError(text: string): { message: string; field: string } {
  try {
    parseKubeProxyConfiguration(HEAD + text);
  } catch (e) {
    if (isKdpError(e, 'KDP_CONFIG')) {
      return { message: e.message, field: e.details.causes?.[0]?.field ?? '' };
    }
    throw e;
  }
  throw new Error('expected KDP_CONFIG');
}

describe('KubeProxyConfiguration', () => {
  it('defaults as upstream: iptables, bit 14, localhost node ports, 30s / 1s', () => {
    const s = parseKubeProxyConfiguration(undefined);
    expect(s).toMatchObject({ mode: 'iptables', masqueradeBit: 14, masqueradeAll: false,
      localhostNodePorts: true, syncPeriodMs: 30_000, minSyncPeriodMs: 1_000,
      detectLocalMode: 'ClusterCIDR', ipvsScheduler: 'rr' });
  });

  it('gives one proxier per node family with its own detector CIDR', () => {
    const s = parseKubeProxyConfiguration(`${HEAD}clusterCIDR: 10.244.0.0/16,fd00:10:244::/56\n`);
    const [v4, v6] = buildProxierConfigs(s, { nodeName: 'n1',
      nodeIPs: ['172.18.0.2', 'fd00::2'] }, ['10.96.0.0/12', 'fd00:10:96::/112']);
    expect(v4).toMatchObject({ family: 'IPv4', nodeIPs: ['172.18.0.2'], localhostNodePorts: true,
      detectLocal: { mode: 'ClusterCIDR', cidrs: ['10.244.0.0/16'] },
      serviceCIDRs: ['10.96.0.0/12'] });
    expect(v6).toMatchObject({ family: 'IPv6', localhostNodePorts: false,
      detectLocal: { cidrs: ['fd00:10:244::/56'] }, serviceCIDRs: ['fd00:10:96::/112'] });
  });

  it('turns localhost node ports off when nodePortAddresses excludes loopback', () => {
    const s = parseKubeProxyConfiguration(`${HEAD}nodePortAddresses: [172.18.0.0/16]\n`);
    const [c] = buildProxierConfigs(s, { nodeName: 'n', nodeIPs: ['172.18.0.2'] }, []);
    expect(c!.localhostNodePorts).toBe(false);
    expect(c!.nodePortAddresses).toEqual(['172.18.0.0/16']);
    const all = parseKubeProxyConfiguration(`${HEAD}nodePortAddresses: [0.0.0.0/0]\n`);
    expect(buildProxierConfigs(all, { nodeName: 'n', nodeIPs: [] }, [])[0]!.nodePortAddresses)
      .toEqual([]);
  });

  it('has no local detector when the cluster CIDR is missing for the family', () => {
    const [c] = buildProxierConfigs(parseKubeProxyConfiguration(''),
      { nodeName: 'n', nodeIPs: ['10.0.0.1'] }, []);
    expect(c!.detectLocal.mode).toBe('None');
  });

  it('names the field of every invalid setting', () => {
    expect(configError('clusterCIDR: 10.244.0.0/33\n').field).toBe('clusterCIDR');
    expect(configError('iptables: {masqueradeBit: 32}\n').field).toBe('iptables.masqueradeBit');
    expect(configError('iptables: {syncPeriod: 5x}\n').field).toBe('iptables.syncPeriod');
    expect(configError('mode: userspace\n').field).toBe('mode');
    expect(configError('nodePortAddresses: [bogus]\n').field).toBe('nodePortAddresses[0]');
    expect(configError('detectLocalMode: Magic\n').field).toBe('detectLocalMode');
    expect(configError('frobnicate: true\n').field).toBe('frobnicate');
    expect(configError('ipvs: {scheduler: fastest}\n').field).toBe('ipvs.scheduler');
  });

  it('parses Go durations', () => {
    expect(parseGoDuration('1m30s', 'f')).toBe(90_000);
    expect(parseGoDuration('500ms', 'f')).toBe(500);
    expect(parseGoDuration('1h', 'f')).toBe(3_600_000);
  });
});
