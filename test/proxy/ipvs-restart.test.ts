import { describe, expect, it } from 'vitest';
import { parseIpvsadm } from '../../src/ruleset/ipvs/index.js';
import { ipvsPipeline, realsOf, service, slice, stateOf } from './ipvs-fixtures.js';

// What a restarted kube-proxy finds in the kernel: a quiesced real server that is still an
// endpoint, one that is not, and a virtual server of a service that no longer exists.
const LEFTOVER = parseIpvsadm([
  '-A -t 10.96.0.20:80 -s rr',
  '-a -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 0',
  '-a -t 10.96.0.20:80 -r 10.244.1.6:8080 -m -w 1',
  '-A -t 10.96.0.99:80 -s rr',
  '',
].join('\n'));

describe('ipvs proxier restart against existing kernel state', () => {
  it('resets weights on the first sync, removes stale real and virtual servers', () => {
    const { pipeline, proxier } = ipvsPipeline(
      [service('web', { clusterIP: '10.96.0.20' }), slice('web', [{ ip: '10.244.1.5' }])],
      undefined, { initialIpvs: LEFTOVER, initialAddresses: ['10.96.0.20', '10.96.0.99'] });
    const state = stateOf(pipeline.sync());
    expect(realsOf(state, '10.96.0.20:80')).toEqual(['10.244.1.5:8080 w=1']);
    expect(state.ipvs.virtualServers.map((v) => v.address)).toEqual(['10.96.0.20']);
    expect(proxier.lastOperations()).toEqual([
      '-e -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 1',
      '-d -t 10.96.0.20:80 -r 10.244.1.6:8080',
      'ipset add KUBE-CLUSTER-IP 10.96.0.20,tcp:80',
      'ipset add KUBE-IPVS-IPS 10.96.0.20',
      'ip addr del 10.96.0.99/32 dev kube-ipvs0',
      '-D -t 10.96.0.99:80',
    ]);
  });
});
