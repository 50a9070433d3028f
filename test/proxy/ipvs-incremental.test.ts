import { describe, expect, it } from 'vitest';
import { ipvsPipeline, service, slice } from './ipvs-fixtures.js';

const web = service('web', { clusterIP: '10.96.0.20' });
const api = service('api', { clusterIP: '10.96.0.30' });

describe('ipvs incremental sync (no partial sync, differences applied)', () => {
  it('the first sync adds each virtual server, binds its address, then adds real servers', () => {
    const { pipeline, proxier } = ipvsPipeline([web, slice('web', [{ ip: '10.244.1.5' }])]);
    const result = pipeline.sync();
    expect(result.full).toBe(true);
    expect(result.artifacts.map((a) => a.kind))
      .toEqual(['ipvs', 'ipset', 'iptables-restore', 'kube-ipvs0']);
    expect(proxier.lastOperations()).toEqual([
      '-A -t 10.96.0.20:80 -s rr',
      'ip addr add 10.96.0.20/32 dev kube-ipvs0',
      '-a -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 1',
      'ipset add KUBE-CLUSTER-IP 10.96.0.20,tcp:80',
      'ipset add KUBE-IPVS-IPS 10.96.0.20',
    ]);
  });

  it('a sync with nothing changed does no work but still describes the whole state', () => {
    const { pipeline, proxier } = ipvsPipeline([web, slice('web', [{ ip: '10.244.1.5' }])]);
    const first = pipeline.sync();
    pipeline.commit(true);
    const second = pipeline.sync();
    expect(proxier.lastOperations()).toEqual([]);
    expect(second.artifacts).toEqual(first.artifacts);
  });

  it('deleting a service unbinds its address, deletes set entries and its virtual server', () => {
    const { pipeline, proxier } = ipvsPipeline([web, api, slice('web', [{ ip: '10.244.1.5' }])]);
    pipeline.sync();
    pipeline.commit(true);
    pipeline.onService(api, undefined);
    pipeline.sync();
    expect(proxier.lastOperations()).toEqual([
      'ipset del KUBE-CLUSTER-IP 10.96.0.30,tcp:80',
      'ipset del KUBE-IPVS-IPS 10.96.0.30',
      'ip addr del 10.96.0.30/32 dev kube-ipvs0',
      '-D -t 10.96.0.30:80',
    ]);
  });

  it('changing affinity edits the virtual server in place', () => {
    const { pipeline, proxier } = ipvsPipeline([web]);
    pipeline.sync();
    pipeline.commit(true);
    const sticky = service('web', { clusterIP: '10.96.0.20', sessionAffinity: 'ClientIP' });
    pipeline.onService(web, sticky);
    pipeline.sync();
    expect(proxier.lastOperations()).toEqual(['-E -t 10.96.0.20:80 -s rr -p 10800']);
  });

  it('after a failed apply the next sync redoes the work against the old state', () => {
    const { pipeline, proxier } = ipvsPipeline([web]);
    pipeline.sync();
    const ops = [...proxier.lastOperations()];
    pipeline.commit(false);
    pipeline.sync();
    expect(proxier.lastOperations()).toEqual(ops);
  });

  it('records where each virtual and real server came from', () => {
    const { pipeline } = ipvsPipeline([web, slice('web', [{ ip: '10.244.1.5' }])]);
    const { origins } = pipeline.sync();
    expect(origins.get('10.96.0.20:80/TCP')).toEqual({ servicePort: 'ns/web:http' });
    expect(origins.get('10.96.0.20:80/TCP/10.244.1.5:8080'))
      .toEqual({ servicePort: 'ns/web:http', endpoint: '10.244.1.5:8080' });
    expect(origins.get('10.96.0.20:80/TCP/10.244.1.6:8080')).toBeUndefined();
    expect([...origins.keys()]).toEqual(['10.96.0.20:80/TCP', '10.96.0.20:80/TCP/10.244.1.5:8080']);
    expect(origins.size).toBe(2);
  });
});
