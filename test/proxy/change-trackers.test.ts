import { describe, expect, it } from 'vitest';
import { EndpointsChangeTracker } from '../../src/proxy/endpoints-change-tracker.js';
import { ServiceChangeTracker, serviceToServicePorts }
  from '../../src/proxy/service-change-tracker.js';
import { ep, service, slice } from '../helpers/proxy-objects.js';

const v4 = { family: 'IPv4' as const };

describe('service change tracker', () => {
  it('reads stored objects as upstream: sloppy IPs, trimmed ranges, other family dropped', () => {
    const svc = service('ns', 'lb', {
      type: 'LoadBalancer', clusterIP: '10.96.0.020', externalIPs: ['192.0.2.010', '2001:db8::1'],
      loadBalancerSourceRanges: [' 198.51.100.000/024', '2001:db8::/64 ', 'junk'],
      externalTrafficPolicy: 'Local', healthCheckNodePort: 32000,
      ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }],
    }, { loadBalancer: { ingress: [{ ip: '203.0.113.001' }, { ip: '203.0.113.2', ipMode: 'Proxy' },
      { ip: '2001:db8::2' }, { hostname: 'lb.example' }] } });
    const p = serviceToServicePorts(svc, v4).get('ns/lb:http/TCP')!;
    expect(p.clusterIP).toBe('10.96.0.20');
    expect(p.externalIPs).toEqual(['192.0.2.10']);
    expect(p.loadBalancerSourceRanges).toEqual(['198.51.100.0/24']);
    expect(p.loadBalancerVIPs).toEqual(['203.0.113.1']);
    expect(p.healthCheckNodePort).toBe(32000);
    expect(p.externalPolicyLocal).toBe(true);
  });

  it('skips headless, ExternalName and services without a cluster IP of the family', () => {
    expect(serviceToServicePorts(service('ns', 'h', { clusterIP: 'None' }), v4).size).toBe(0);
    expect(serviceToServicePorts(service('ns', 'x', { type: 'ExternalName',
      externalName: 'a.b', clusterIP: '' }), v4).size).toBe(0);
    expect(serviceToServicePorts(service('ns', 's', { clusterIP: 'fd00::1' }), v4).size).toBe(0);
    const dual = service('ns', 'd', { clusterIPs: ['10.96.0.5', 'fd00::5'], clusterIP: '10.96.0.5',
      ipFamilies: ['IPv4', 'IPv6'] });
    expect(serviceToServicePorts(dual, { family: 'IPv6' }).get('ns/d:http/TCP')!.clusterIP)
      .toBe('fd00::5');
  });

  it('defaults ClientIP affinity to 10800 s and keeps a health check only for LB + Local', () => {
    const p = serviceToServicePorts(service('ns', 'a', { clusterIP: '10.96.0.1',
      sessionAffinity: 'ClientIP', type: 'NodePort', externalTrafficPolicy: 'Local',
      healthCheckNodePort: 31000 }), v4).get('ns/a:http/TCP')!;
    expect(p.sessionAffinityClientIP).toBe(true);
    expect(p.stickyMaxAgeSeconds).toBe(10800);
    expect(p.healthCheckNodePort).toBe(0);
  });

  it('reports a change only when the derived ports differ', () => {
    const t = new ServiceChangeTracker(v4);
    const a = service('ns', 'a', { clusterIP: '10.96.0.1' });
    t.update(undefined, a);
    expect([...t.checkout().changedServices]).toEqual(['ns/a']);
    const relabelled = { ...a, metadata: { ...a.metadata, labels: { x: 'y' } } };
    expect(t.update(a, relabelled)).toBe(false);
    expect(t.checkout().changedServices.size).toBe(0);
    t.update(relabelled, undefined);
    const c = t.checkout();
    expect([...c.changedKeys]).toEqual(['ns/a:http/TCP']);
    expect(c.services.size).toBe(0);
  });

  it('forgets an add followed by a delete before the sync', () => {
    const t = new ServiceChangeTracker(v4);
    const a = service('ns', 'a', { clusterIP: '10.96.0.1' });
    t.update(undefined, a);
    expect(t.update(a, undefined)).toBe(false);
    expect(t.checkout().changedServices.size).toBe(0);
  });
});

describe('endpoints change tracker', () => {
  const opts = { family: 'IPv4' as const, nodeName: 'n1' };

  it('merges slices, sorts by ip:port string and prefers a non-terminating duplicate', () => {
    const t = new EndpointsChangeTracker(opts);
    t.update(slice('ns', 'a', 'a-1', [ep('10.244.1.2', 'n1'), ep('10.244.1.15', 'n2'),
      ep('10.244.1.1', 'n2', { ready: false, serving: true, terminating: true })]));
    t.update(slice('ns', 'a', 'a-2', [ep('10.244.1.1', 'n3'),
      ep('10.244.1.2', 'n2', { ready: false, terminating: true })]));
    const list = t.checkout().endpoints.get('ns/a:http/TCP')!;
    expect(list.map((e) => e.endpoint)).toEqual(
      ['10.244.1.15:8080', '10.244.1.1:8080', '10.244.1.2:8080']);
    expect(list[1]!.nodeName).toBe('n3');
    expect(list[2]!.isLocal).toBe(true);
    expect(list[2]!.ready).toBe(true);
  });

  it('reads conditions: absent ready/serving are true, absent terminating is false', () => {
    const t = new EndpointsChangeTracker(opts);
    t.update(slice('ns', 'a', 'a-1', [ep('10.244.1.2'), ep('10.244.1.3', undefined,
      { ready: false, serving: false, terminating: true })]));
    const [x, y] = t.checkout().endpoints.get('ns/a:http/TCP')!;
    expect([x!.ready, x!.serving, x!.terminating, x!.isLocal]).toEqual([true, true, false, false]);
    expect([y!.ready, y!.serving, y!.terminating]).toEqual([false, false, true]);
  });

  it('ignores other families, slices without the service label, and empty addresses', () => {
    const t = new EndpointsChangeTracker(opts);
    expect(t.update(slice('ns', 'a', 'a-6', [ep('fd00::1')], { family: 'IPv6' }))).toBe(false);
    const orphan = slice('ns', 'a', 'o', [ep('10.244.1.9')]);
    delete orphan.metadata.labels;
    expect(t.update(orphan)).toBe(false);
    t.update(slice('ns', 'a', 'a-1', [{ addresses: [] }, ep('010.244.001.009')]));
    expect(t.checkout().endpoints.get('ns/a:http/TCP')!.map((e) => e.ip)).toEqual(['10.244.1.9']);
  });

  it('reports a service as changed only when its derived endpoints differ', () => {
    const t = new EndpointsChangeTracker(opts);
    const s1 = slice('ns', 'a', 'a-1', [ep('10.244.1.2', 'n1')]);
    t.update(s1);
    expect([...t.checkout().changedServices]).toEqual(['ns/a']);
    t.update({ ...s1, metadata: { ...s1.metadata, annotations: { touched: 'yes' } } });
    expect(t.checkout().changedServices.size).toBe(0);
    t.update(s1, true);
    const c = t.checkout();
    expect([...c.changedServices]).toEqual(['ns/a']);
    expect(c.endpoints.size).toBe(0);
  });
});
