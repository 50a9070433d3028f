import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { isKdpError } from '../../src/errors.js';
import type { ProxyMode } from '../../src/proxy/backend.js';
import { compileConfigs, compileOffline, loadBackend, serviceCIDRsOf }
  from '../../src/proxy/compile.js';
import { ep, service, slice } from '../helpers/proxy-objects.js';

const objects: KubeObject[] = [
  service('ns', 'a', { clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1', 'fd00:10:96::1'],
    ipFamilies: ['IPv4', 'IPv6'] }),
  slice('ns', 'a', 'a-4', [ep('10.244.1.1', 'n1')]),
  slice('ns', 'a', 'a-6', [ep('fd00:10:244::1', 'n1')], { family: 'IPv6' }),
];

describe('offline compile', () => {
  it('compiles each family of a dual-stack node under its own header', async () => {
    const text = await compileOffline({ objects, mode: 'iptables', nodeName: 'n1',
      nodeIPs: ['172.18.0.2', 'fd00:172:18::2'], canonical: true });
    expect(text.startsWith('# IPv4\n*filter\n')).toBe(true);
    const v6 = text.slice(text.indexOf('# IPv6\n'));
    expect(v6).toContain('-d fd00:10:96::1 --dport 80');
    expect(v6).toContain('--to-destination [fd00:10:244::1]:8080');
    expect(text.slice(0, text.indexOf('# IPv6'))).not.toContain('fd00');
  });

  it('takes the mode from the config when none is given', async () => {
    const configText = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\n' +
      'kind: KubeProxyConfiguration\nmode: iptables\n';
    const text = await compileOffline({ objects, configText, nodeName: 'n1', nodeIPs: [] });
    expect(text).toContain('-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000');
  });

  it('says clearly when a mode has no backend', async () => {
    const err = await loadBackend('bogus' as ProxyMode).catch((e: unknown) => e);
    expect(isKdpError(err, 'KDP_CONFIG')).toBe(true);
    expect((err as Error).message).toMatch(/proxy mode "bogus" is not one of iptables, nftables, ipvs/);
    const mod = await loadBackend('iptables');
    expect(typeof mod.buildProxier).toBe('function');
  });

  it('learns service CIDRs from ServiceCIDR objects, with the default when there are none', () => {
    expect(serviceCIDRsOf(objects)).toEqual(['10.96.0.0/12', 'fd00:10:96::/112']);
    const cidr = { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR',
      metadata: { name: 'extra' }, spec: { cidrs: ['10.100.0.0/16'] } };
    expect(serviceCIDRsOf([cidr])).toEqual(['10.100.0.0/16']);
  });

  it('reads node labels and pod CIDRs from the Node object of the node', () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1',
      labels: { 'topology.kubernetes.io/zone': 'z1' } }, spec: { podCIDRs: ['10.244.3.0/24'] } };
    const [c] = compileConfigs({ objects: [node], nodeName: 'n1', nodeIPs: ['10.0.0.1'],
      configText: 'detectLocalMode: NodeCIDR\n' });
    expect(c!.nodeZone).toBe('z1');
    expect(c!.detectLocal).toEqual({ mode: 'NodeCIDR', cidrs: ['10.244.3.0/24'] });
  });
});
