import { describe, expect, it } from 'vitest';
import { entriesOf, ipvsPipeline, realsOf, service, slice, stateOf } from './ipvs-fixtures.js';

const nodePort = (extra: Record<string, unknown>) => service('web', {
  type: 'NodePort', clusterIP: '10.96.0.20', externalIPs: ['192.0.2.10'],
  ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }],
  ...extra,
});

describe('ipvs traffic policies', () => {
  it('eTP Local with a local endpoint: external virtual servers use only local ones', () => {
    const { pipeline } = ipvsPipeline([nodePort({ externalTrafficPolicy: 'Local' }),
      slice('web', [{ ip: '10.244.0.5', node: 'node-a' }, { ip: '10.244.1.5' }])]);
    const state = stateOf(pipeline.sync());
    expect(realsOf(state, '10.96.0.20:80')).toEqual(['10.244.0.5:8080 w=1', '10.244.1.5:8080 w=1']);
    expect(realsOf(state, '172.18.0.2:30080')).toEqual(['10.244.0.5:8080 w=1']);
    expect(realsOf(state, '192.0.2.10:80')).toEqual(['10.244.0.5:8080 w=1']);
    expect(entriesOf(state, 'KUBE-NODE-PORT-LOCAL-TCP')).toEqual(['30080']);
    expect(entriesOf(state, 'KUBE-EXTERNAL-IP-LOCAL')).toEqual(['192.0.2.10,tcp:80']);
    expect(entriesOf(state, 'KUBE-EXTERNAL-IP')).toEqual([]);
    expect(entriesOf(state, 'KUBE-LOOP-BACK')).toEqual(['10.244.0.5,tcp:8080,10.244.0.5']);
  });

  it('eTP Local without a local endpoint falls back to cluster endpoints (no drop)', () => {
    const { pipeline } = ipvsPipeline([nodePort({ externalTrafficPolicy: 'Local' }),
      slice('web', [{ ip: '10.244.1.5' }])]);
    const state = stateOf(pipeline.sync());
    expect(realsOf(state, '172.18.0.2:30080')).toEqual(['10.244.1.5:8080 w=1']);
  });

  it('iTP Local without a local endpoint leaves the ClusterIP virtual server empty', () => {
    const { pipeline } = ipvsPipeline([
      service('web', { clusterIP: '10.96.0.20', internalTrafficPolicy: 'Local' }),
      slice('web', [{ ip: '10.244.1.5' }])]);
    expect(realsOf(stateOf(pipeline.sync()), '10.96.0.20:80')).toEqual([]);
  });

  it('a service without endpoints keeps its virtual servers with no real servers', () => {
    const { pipeline } = ipvsPipeline([nodePort({})]);
    const state = stateOf(pipeline.sync());
    expect(state.ipvs.virtualServers.map((v) => v.realServers.length)).toEqual([0, 0, 0]);
    expect(state.iptables).not.toContain('REJECT --reject');
  });

  it('an externalIP that is a node address is not bound on kube-ipvs0', () => {
    const { pipeline } = ipvsPipeline([nodePort({ externalIPs: ['172.18.0.2'] })]);
    const state = stateOf(pipeline.sync());
    expect(state.dummyAddresses).toEqual(['10.96.0.20/32']);
    expect(entriesOf(state, 'KUBE-IPVS-IPS')).toEqual(['10.96.0.20']);
  });
});
