import { describe, expect, it } from 'vitest';
import { ipvsPipeline, service, slice, stateOf } from './ipvs-fixtures.js';

describe('ipvs session affinity', () => {
  it('ClientIP affinity makes every virtual server of the port persistent for the timeout', () => {
    const svc = service('web', {
      type: 'LoadBalancer', clusterIP: '10.96.0.20', externalIPs: ['192.0.2.10'],
      sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }],
    }, { loadBalancer: { ingress: [{ ip: '203.0.113.5' }] } });
    const { pipeline } = ipvsPipeline([svc, slice('web', [{ ip: '10.244.1.5' }])]);
    const vss = stateOf(pipeline.sync()).ipvs.virtualServers;
    expect(vss.map((v) => `${v.address}:${v.port} p=${v.persistence}`)).toEqual([
      '10.96.0.20:80 p=600', '172.18.0.2:30080 p=600', '192.0.2.10:80 p=600',
      '203.0.113.5:80 p=600',
    ]);
  });

  it('ClientIP affinity without a timeout uses the default 10800 seconds', () => {
    const svc = service('web', { clusterIP: '10.96.0.20', sessionAffinity: 'ClientIP' });
    const { pipeline } = ipvsPipeline([svc, slice('web', [{ ip: '10.244.1.5' }])]);
    const text = pipeline.sync().artifacts[0]!.text;
    expect(text).toContain('-A -t 10.96.0.20:80 -s rr -p 10800\n');
  });

  it('a service without affinity is not persistent', () => {
    const svc = service('web', { clusterIP: '10.96.0.20' });
    const { pipeline } = ipvsPipeline([svc, slice('web', [{ ip: '10.244.1.5' }])]);
    expect(stateOf(pipeline.sync()).ipvs.virtualServers[0]!.persistence).toBeUndefined();
  });

  it('the mh scheduler sets the source-hash flag (mh-port)', () => {
    const cfg = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n' +
      'mode: ipvs\nipvs: {scheduler: mh}\n';
    const svc = service('web', { clusterIP: '10.96.0.20' });
    const { pipeline } = ipvsPipeline([svc, slice('web', [{ ip: '10.244.1.5' }])], cfg);
    expect(pipeline.sync().artifacts[0]!.text).toContain('-A -t 10.96.0.20:80 -s mh -b mh-port\n');
  });
});
