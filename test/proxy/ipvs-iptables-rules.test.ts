import { describe, expect, it } from 'vitest';
import { ipvsPipeline, service, slice, stateOf } from './ipvs-fixtures.js';

const cfg = (extra: string) => 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\n' +
  `kind: KubeProxyConfiguration\nmode: ipvs\n${extra}`;
const web = service('web', { clusterIP: '10.96.0.20' });
const eps = slice('web', [{ ip: '10.244.1.5' }]);

const clusterIPMasq = (iptables: string) =>
  iptables.split('\n')
    .find((l) => l.includes('--match-set KUBE-CLUSTER-IP') && l.includes('MARK-MASQ'));

describe('ipvs supplementary iptables rules', () => {
  it('masquerades off-cluster traffic to cluster IPs with a local-traffic detector', () => {
    const { pipeline } = ipvsPipeline([web, eps], cfg('clusterCIDR: 10.244.0.0/16\n'));
    expect(clusterIPMasq(stateOf(pipeline.sync()).iptables))
      .toContain('dst,dst ! -s 10.244.0.0/16 -j');
  });

  it('masquerades all cluster-IP traffic with masqueradeAll', () => {
    const { pipeline } = ipvsPipeline([web, eps],
      cfg('clusterCIDR: 10.244.0.0/16\niptables: {masqueradeAll: true}\n'));
    expect(clusterIPMasq(stateOf(pipeline.sync()).iptables))
      .toMatch(/--match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ$/);
  });

  it('without a detector masquerades node traffic whose source is a service VIP (src,dst)', () => {
    const { pipeline } = ipvsPipeline([web, eps], cfg(''));
    expect(clusterIPMasq(stateOf(pipeline.sync()).iptables))
      .toMatch(/--match-set KUBE-CLUSTER-IP src,dst -j KUBE-MARK-MASQ$/);
  });

  it('omits set-driven rules for empty sets but always writes the filter guards', () => {
    const { pipeline } = ipvsPipeline([], cfg(''));
    const { iptables } = stateOf(pipeline.sync());
    expect(iptables).not.toContain('KUBE-CLUSTER-IP dst,dst -j ACCEPT');
    expect(iptables)
      .toContain('-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN');
    expect(iptables).toContain('-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set' +
      ' KUBE-IPVS-IPS dst -j REJECT');
  });

  it('drops node access to an LB VIP whose source ranges exclude the node IP', () => {
    const lb = service('lb', {
      type: 'LoadBalancer', clusterIP: '10.96.0.40', loadBalancerSourceRanges: ['198.51.100.0/24'],
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30090 }],
    }, { loadBalancer: { ingress: [{ ip: '203.0.113.5' }] } });
    const { pipeline } = ipvsPipeline([lb], cfg(''));
    const state = stateOf(pipeline.sync());
    expect(state.iptables).toContain('-A KUBE-IPVS-OUT-FILTER -s 203.0.113.5 -m ipvs --vaddr' +
      ' 203.0.113.5 --vproto tcp --vport 80 -j DROP\n');
    const sourceIP = state.ipsets.find((s) => s.name === 'KUBE-LOAD-BALANCER-SOURCE-IP');
    expect(sourceIP!.entries).toEqual([]);
  });
});
