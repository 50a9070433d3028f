// kube-proxy never builds a rule from a field it has not checked: a Service, port, endpoint or
// address entry with a bad value (as a store written around validation may hold) is left out and
// reported, and every other Service still gets its rules, in every mode. The iptables text of
// such a store passes the fake iptables-restore and, as root, the kernel's own
// `iptables-restore --test` (and `nft -c`) in a namespace the test creates.

import { afterAll, describe, expect, it } from 'vitest';
import type { EndpointSlice, KubeObject, Service } from '../../src/api/types.js';
import { buildHostExec } from '../../src/host/exec.js';
import { FakeIptables } from '../../src/host/fake-iptables.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import type { ProxyMode } from '../../src/proxy/backend.js';
import { compileOffline } from '../../src/proxy/compile.js';
import { EndpointsChangeTracker } from '../../src/proxy/endpoints-change-tracker.js';
import type { InputProblem } from '../../src/proxy/input-check.js';
import { ServiceChangeTracker } from '../../src/proxy/service-change-tracker.js';
import { ep, service, slice } from '../helpers/proxy-objects.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const MODES: readonly ProxyMode[] = ['iptables', 'nftables', 'ipvs'];

/** Any JSON: what a store written around validation may hold. */
function raw<T>(o: unknown): T {
  return o as T;
}

const badAffinity = raw<Service>(service('default', 'bad', {
  clusterIP: '10.96.0.10', sessionAffinity: 'ClientIP',
  sessionAffinityConfig: raw({ clientIP: { timeoutSeconds: 'abc' } }),
}));
const good = service('default', 'good', { clusterIP: '10.96.0.11' });
const objects: KubeObject[] = [
  badAffinity, good,
  slice('default', 'bad', 'bad-1', [ep('10.244.0.5')]),
  slice('default', 'good', 'good-1', [ep('10.244.0.6')]),
];

async function compile(mode: ProxyMode, objs: readonly KubeObject[] = objects) {
  const problems: InputProblem[] = [];
  const text = await compileOffline({ objects: objs, mode, nodeName: 'n1',
    nodeIPs: ['172.18.0.2'], onProblem: (p) => problems.push(p) });
  return { text, problems };
}

describe('a Service with timeoutSeconds "abc" next to a good one', () => {
  it.each(MODES)('%s: rules for the good Service only, the bad one reported', async (mode) => {
    const { text, problems } = await compile(mode);
    expect(text).toContain('10.96.0.11');
    expect(text).toContain('10.244.0.6');
    expect(text).not.toContain('10.96.0.10');
    expect(text).not.toContain('10.244.0.5');
    expect(text).not.toContain('abc');
    expect(problems).toEqual([{ kind: 'Service', namespace: 'default', name: 'bad',
      skipped: 'object', message: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds: must be ' +
        'an integer in 1..86400, got "abc"' }]);
  });

  it('iptables: the text is taken whole by the fake iptables-restore', async () => {
    const { text } = await compile('iptables');
    const fake = new FakeIptables();
    fake.restore(text);
    expect(fake.save()).toContain('default/good:http cluster IP');
  });
});

/** The Service `svc` with `spec` merged over a good one (clusterIP 10.96.0.20). */
function withSpec(spec: Record<string, unknown>, status?: unknown): Service {
  return raw<Service>({ ...service('ns', 'svc', { clusterIP: '10.96.0.20' }),
    spec: { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80 }], ...spec },
    ...(status ? { status } : {}) });
}

function ports(svc: Service) {
  const problems: InputProblem[] = [];
  const t = new ServiceChangeTracker({ family: 'IPv4', report: (p) => problems.push(p) });
  t.update(undefined, svc);
  return { ports: [...t.checkout().services.values()], problems };
}

describe('service change tracker checks every field a rule is built from', () => {
  it.each([
    ['timeoutSeconds 0', { sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } } }, /timeoutSeconds/],
    ['timeoutSeconds 86401', { sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 86401 } } }, /timeoutSeconds/],
    ['timeoutSeconds 1.5', { sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 1.5 } } }, /timeoutSeconds/],
    ['sessionAffinity Sticky', { sessionAffinity: 'Sticky' }, /spec.sessionAffinity:/],
    ['type Foo', { type: 'Foo' }, /spec.type: must be one of/],
    ['clusterIP 999.1.1.1', { clusterIP: '999.1.1.1' }, /spec.clusterIP: must be an IP/],
    ['clusterIPs not a list', { clusterIPs: '10.96.0.20' }, /spec.clusterIPs: must be a list/],
    ['externalTrafficPolicy Sometimes', { type: 'NodePort', externalTrafficPolicy: 'Sometimes',
      ports: [{ name: 'http', port: 80, nodePort: 30080 }] }, /externalTrafficPolicy/],
    ['healthCheckNodePort "x"', { healthCheckNodePort: 'x' }, /healthCheckNodePort/],
    ['ports an object', { ports: { port: 80 } }, /spec.ports: must be a list/],
    ['externalIPs a string', { externalIPs: '192.0.2.1' }, /spec.externalIPs: must be a list/],
    ['source ranges none a CIDR', { type: 'LoadBalancer', loadBalancerSourceRanges: ['junk'] },
      /no entry is a CIDR.*allow every source/],
  ])('%s: the Service gets no ports and is reported', (_name, spec, message) => {
    const { ports: got, problems } = ports(withSpec(spec));
    expect(got).toEqual([]);
    expect(problems).toEqual([expect.objectContaining({ skipped: 'object', name: 'svc',
      message: expect.stringMatching(message) })]);
  });

  it('a name that is no RFC 1035 label (it would go into rule comments) is refused', () => {
    const svc = service('ns', 'a"b', { clusterIP: '10.96.0.20' });
    const { ports: got, problems } = ports(svc);
    expect(got).toEqual([]);
    expect(problems[0]!.message).toMatch(/^metadata.name: must be an RFC 1035 label/);
  });

  it.each([
    ['port 0', { name: 'b', port: 0 }],
    ['port 70000', { name: 'b', port: 70000 }],
    ['port "81"', { name: 'b', port: '81' }],
    ['protocol ICMP', { name: 'b', port: 81, protocol: 'ICMP' }],
    ['nodePort 99999', { name: 'b', port: 81, nodePort: 99999 }],
    ['name with a space', { name: 'b c', port: 81 }],
  ])('%s: only that port is left out', (_name, port) => {
    const { ports: got, problems } = ports(withSpec({ type: 'NodePort',
      ports: [{ name: 'a', port: 80, nodePort: 30080 }, port] }));
    expect(got.map((p) => p.port)).toEqual([80]);
    expect(problems).toEqual([expect.objectContaining({ skipped: 'port',
      message: expect.stringMatching(/^spec\.ports\[1\]\./) })]);
  });

  it('an address entry that is no IP is dropped and reported, the others kept', () => {
    const { ports: got, problems } = ports(withSpec({ type: 'LoadBalancer',
      externalIPs: ['192.0.2.1', '1.2.3', '', 7],
      loadBalancerSourceRanges: ['198.51.100.0/24', 'junk'],
      ports: [{ name: 'a', port: 80, nodePort: 30080 }, { name: 'b', port: 81, nodePort: 30081 }],
    }, { loadBalancer: { ingress: [{ ip: '203.0.113.1' }, { ip: 'nope' }, 'x'] } }));
    expect(got.map((p) => [p.externalIPs, p.loadBalancerSourceRanges, p.loadBalancerVIPs]))
      .toEqual([0, 1].map(() => [['192.0.2.1'], ['198.51.100.0/24'], ['203.0.113.1']]));
    // Once per Service (not per port); the empty string is skipped silently, as upstream.
    expect(problems.map((p) => [p.skipped, p.message.split(':')[0]])).toEqual([
      ['entry', 'status.loadBalancer.ingress[1].ip'],
      ['entry', 'status.loadBalancer.ingress[2]'],
      ['entry', 'spec.externalIPs[1]'],
      ['entry', 'spec.externalIPs[3]'],
      ['entry', 'spec.loadBalancerSourceRanges[1]'],
    ]);
  });

  it('a Service updated to a bad value loses its rules, and gets them back when fixed', () => {
    const t = new ServiceChangeTracker({ family: 'IPv4' });
    const ok = withSpec({});
    const broken = withSpec({ ports: [{ name: 'http', port: 'eighty' }] });
    t.update(undefined, ok);
    expect(t.checkout().services.size).toBe(1);
    t.update(ok, broken);
    expect(t.checkout().services.size).toBe(0);
    t.update(broken, ok);
    expect(t.checkout().services.size).toBe(1);
  });

  it('valid input is read exactly as before (defaults, nulls as absent)', () => {
    const { ports: got, problems } = ports(withSpec({ sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: null } }, clusterIPs: null,
      externalIPs: null, ports: [{ name: 'http', port: 80, protocol: null, nodePort: null }] }));
    expect(problems).toEqual([]);
    expect(got[0]).toMatchObject({ port: 80, protocol: 'TCP', nodePort: 0,
      stickyMaxAgeSeconds: 10800, externalIPs: [] });
  });
});

function endpoints(s: EndpointSlice) {
  const problems: InputProblem[] = [];
  const t = new EndpointsChangeTracker({ family: 'IPv4', nodeName: 'n1',
    report: (p) => problems.push(p) });
  t.update(s);
  return { map: t.checkout().endpoints, problems };
}

describe('endpoints change tracker checks every port and endpoint', () => {
  it('bad endpoints are left out and reported, the good one kept', () => {
    const s = slice('ns', 'web', 'web-1', raw([
      ep('10.244.0.6', 'n1'),
      ep('999.1.1.1'),
      ep('fd00::1'),
      { addresses: '10.244.0.7' },
      ep('10.244.0.8', undefined, raw({ ready: 'yes' })),
      ep('10.244.0.9', undefined, undefined, raw({ hints: { forZones: 5 } })),
      ep('10.244.0.10', raw(7)),
      5,
    ]));
    const { map, problems } = endpoints(s);
    expect(map.get('ns/web:http/TCP')!.map((e) => e.endpoint)).toEqual(['10.244.0.6:8080']);
    expect(problems.map((p) => [p.skipped, p.message.split(':')[0]])).toEqual([
      ['endpoint', 'endpoints[1].addresses[0]'],
      ['endpoint', 'endpoints[2].addresses[0]'],
      ['endpoint', 'endpoints[3].addresses'],
      ['endpoint', 'endpoints[4].conditions'],
      ['endpoint', 'endpoints[5].hints'],
      ['endpoint', 'endpoints[6].nodeName'],
      ['endpoint', 'endpoints[7]'],
    ]);
  });

  it.each([
    ['port 99999', { name: 'b', port: 99999 }],
    ['port 1.5', { name: 'b', port: 1.5 }],
    ['protocol GRE', { name: 'b', port: 81, protocol: 'GRE' }],
    ['no name', { port: 81 }],
    ['name 5', { name: 5, port: 81 }],
  ])('slice %s: only that port is left out', (_name, port) => {
    const s = slice('ns', 'web', 'web-1', [ep('10.244.0.6')]);
    const { map, problems } = endpoints(raw({ ...s, ports: [...s.ports!, port] }));
    expect([...map.keys()]).toEqual(['ns/web:http/TCP']);
    expect(problems).toEqual([expect.objectContaining({ kind: 'EndpointSlice', name: 'web-1',
      skipped: 'port', message: expect.stringMatching(/^ports\[1\]/) })]);
  });

  it('a slice whose endpoints are not a list contributes nothing, and stops contributing', () => {
    const problems: InputProblem[] = [];
    const t = new EndpointsChangeTracker({ family: 'IPv4', nodeName: 'n1',
      report: (p) => problems.push(p) });
    const s = slice('ns', 'web', 'web-1', [ep('10.244.0.6')]);
    t.update(s);
    expect(t.checkout().endpoints.size).toBe(1);
    t.update(raw({ ...s, endpoints: 5 }));
    expect(t.checkout().endpoints.size).toBe(0);
    expect(problems).toEqual([expect.objectContaining({ skipped: 'object',
      message: 'endpoints: must be a list, got 5' })]);
  });
});

describe('offline compile of malformed objects never crashes', () => {
  it.each(MODES)('%s: ports as an object and endpoints: 5 are reported, not thrown', async (m) => {
    const { text, problems } = await compile(m, [
      raw({ ...good, spec: { clusterIP: '10.96.0.12', ports: { port: 80 } },
        metadata: { namespace: 'default', name: 'odd' } }),
      raw({ ...slice('default', 'good', 'good-2', []), endpoints: 5 }),
      ...objects,
    ]);
    expect(text).toContain('10.96.0.11');
    expect(text).not.toContain('10.96.0.12');
    expect(problems.map((p) => `${p.kind} ${p.name} ${p.skipped}`)).toEqual([
      'Service odd object', 'EndpointSlice good-2 object', 'Service bad object']);
  });
});

const rootOK = canUseNetns(['ip', 'iptables-restore', 'nft']);
const exec = buildHostExec();
const created: string[] = [];

describe.skipIf(!rootOK)('the kernel takes the rules of a store with a bad Service', () => {
  afterAll(async () => {
    for (const ns of created) await deleteNetns(exec, ns);
  });

  it('iptables-restore --test and nft -c accept the compiled text', async () => {
    const ns = testNetnsName();
    created.push(ns);
    await ensureNetns(exec, ns);
    const ipt = await compile('iptables');
    await exec.run('iptables-restore', ['--test', '--noflush'], { netns: ns, input: ipt.text });
    const nft = await compile('nftables');
    await exec.run('nft', ['-c', '-f', '-'], { netns: ns, input: nft.text });
  });
});
