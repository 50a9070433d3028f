import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '../../src/api/types.js';
import { byName, compileScenario, semanticLines } from './helpers.js';

const MODES = ['iptables', 'nftables'] as const;

describe.each(MODES)('semantic diff over the 17-partial-sync steps (%s)', (mode) => {
  it('adding service b shows its address and endpoint, nothing about a', async () => {
    const a = await compileScenario('17-partial-sync', mode);
    const b = await compileScenario('17-partial-sync', mode, undefined, '1-add');
    const lines = semanticLines(a, b);
    expect(lines).toContain('seq/b:http  + ClusterIP 10.96.17.2:80');
    expect(lines).toContain('seq/b:http  + endpoint 10.244.2.1:8080; probability 1.0000000000');
    expect(lines.filter((l) => l.startsWith('seq/a:'))).toEqual([]);
  });

  it('scaling a from two endpoints to three adds one and rebalances the others', async () => {
    const a = await compileScenario('17-partial-sync', mode, undefined, '1-add');
    const b = await compileScenario('17-partial-sync', mode, undefined, '2-scale');
    expect(semanticLines(a, b)).toEqual([
      'seq/a:http  endpoint 10.244.1.1:8080; probability 0.5000000000 → 0.3333333333',
      'seq/a:http  endpoint 10.244.1.2:8080; probability 0.5000000000 → 0.3333333333',
      'seq/a:http  + endpoint 10.244.1.3:8080; probability 0.3333333333',
    ]);
  });

  it('deleting service b removes exactly its facts', async () => {
    const a = await compileScenario('17-partial-sync', mode, undefined, '2-scale');
    const b = await compileScenario('17-partial-sync', mode, undefined, '3-delete');
    const lines = semanticLines(a, b);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.startsWith('seq/b:http  - ') || l.startsWith('seq/b:http  masq') ||
      l.startsWith('(no service)'))).toBe(true);
    expect(lines).toContain('seq/b:http  - ClusterIP 10.96.17.2:80');
  });
});

describe.each(MODES)('semantic diff of Service edits (%s)', (mode) => {
  it('adding an endpoint to a NodePort service', async () => {
    const a = await compileScenario('04-nodeport', mode);
    const b = await compileScenario('04-nodeport', mode, (objs) => {
      byName<EndpointSlice>(objs, 'EndpointSlice', 'echo-x1').endpoints.push(
        { addresses: ['10.244.2.7'], nodeName: 'node-c', conditions: { ready: true } });
      return objs;
    });
    expect(semanticLines(a, b)).toEqual([
      'default/echo:http  endpoint 10.244.0.11:8080; probability 0.5000000000 → 0.3333333333',
      'default/echo:http  endpoint 10.244.2.11:8080; probability 0.5000000000 → 0.3333333333',
      'default/echo:http  + endpoint 10.244.2.7:8080; probability 0.3333333333',
    ]);
  });

  it('changing a NodePort', async () => {
    const a = await compileScenario('04-nodeport', mode);
    const b = await compileScenario('04-nodeport', mode, (objs) => {
      byName<Service>(objs, 'Service', 'echo').spec!.ports![0]!.nodePort = 30081;
      return objs;
    });
    expect(semanticLines(a, b)).toEqual([
      'default/echo:http  - NodePort 30080',
      'default/echo:http  + NodePort 30081',
    ]);
  });

  it('switching externalTrafficPolicy to Local', async () => {
    const a = await compileScenario('04-nodeport', mode);
    const b = await compileScenario('04-nodeport', mode, (objs) => {
      byName<Service>(objs, 'Service', 'echo').spec!.externalTrafficPolicy = 'Local';
      return objs;
    });
    const lines = semanticLines(a, b);
    expect(lines).toContain('default/echo:http  external traffic policy: Cluster → Local');
    expect(lines).toContain('default/echo:http  masquerade for external traffic: removed');
    expect(lines).toContain(
      'default/echo:http  + local endpoint 10.244.0.11:8080; probability 1.0000000000');
  });

  it('adding a load-balancer source range', async () => {
    const a = await compileScenario('05-loadbalancer-source-ranges', mode);
    const b = await compileScenario('05-loadbalancer-source-ranges', mode, (objs) => {
      byName<Service>(objs, 'Service', 'front').spec!.loadBalancerSourceRanges!.push('192.0.2.0/24');
      return objs;
    });
    expect(semanticLines(a, b)).toEqual(['shop/front:https  + source range 192.0.2.0/24']);
  });

  it('the same objects compiled twice show no difference', async () => {
    const a = await compileScenario('05-loadbalancer-source-ranges', mode);
    expect(semanticLines(a, a)).toEqual([]);
  });
});

describe('semantic diff of ipvs states', () => {
  it('scaling shows the real servers of the virtual server with their share', async () => {
    const a = await compileScenario('17-partial-sync', 'ipvs', undefined, '1-add');
    const b = await compileScenario('17-partial-sync', 'ipvs', undefined, '2-scale');
    const lines = semanticLines(a, b);
    expect(lines).toContain(
      'ipvs tcp 10.96.17.1:80  endpoint 10.244.1.1:8080; probability 0.5000000000 → 0.3333333333');
    expect(lines).toContain(
      'ipvs tcp 10.96.17.1:80  + endpoint 10.244.1.3:8080; probability 0.3333333333');
  });

  it('changing a NodePort moves the node-address virtual server and its ipset entry', async () => {
    const a = await compileScenario('04-nodeport', 'ipvs');
    const b = await compileScenario('04-nodeport', 'ipvs', (objs) => {
      byName<Service>(objs, 'Service', 'echo').spec!.ports![0]!.nodePort = 30081;
      return objs;
    });
    const lines = semanticLines(a, b);
    expect(lines).toContain('ipvs tcp 172.18.0.2:30080  - scheduler: rr');
    expect(lines).toContain('ipvs tcp 172.18.0.2:30081  + scheduler: rr');
    expect(lines).toContain(
      'ipvs tcp 172.18.0.2:30081  + endpoint 10.244.0.11:8080; probability 0.5000000000');
    expect(lines).toContain('(no service)  + ipset KUBE-NODE-PORT-TCP: 30081');
  });

  it('switching externalTrafficPolicy to Local keeps only the local real server', async () => {
    const a = await compileScenario('04-nodeport', 'ipvs');
    const b = await compileScenario('04-nodeport', 'ipvs', (objs) => {
      byName<Service>(objs, 'Service', 'echo').spec!.externalTrafficPolicy = 'Local';
      return objs;
    });
    expect(semanticLines(a, b)).toEqual([
      'ipvs tcp 172.18.0.2:30080  endpoint 10.244.0.11:8080; probability 0.5000000000 → ' +
        '1.0000000000',
      'ipvs tcp 172.18.0.2:30080  - endpoint 10.244.2.11:8080; probability 0.5000000000',
      '(no service)  + ipset KUBE-NODE-PORT-LOCAL-TCP: 30080',
      '(no service)  + rule iptables nat KUBE-NODE-PORT: -p tcp -m set --match-set ' +
        'KUBE-NODE-PORT-LOCAL-TCP dst -j RETURN',
    ]);
  });
});
