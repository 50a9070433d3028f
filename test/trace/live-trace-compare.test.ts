import { describe, expect, it } from 'vitest';
import type { TraceDestination, TraceResult } from '../../src/trace/result.js';
import { compareLive, type ObservedOutcome } from '../../src/trace/live/observed-compare.js';
import { sampleLiveCases, seededRandom } from '../../src/trace/live/live-trace-sample.js';
import type { KernelTrace } from '../../src/trace/live/observed.js';
import type { Topology } from '../../src/trace/topology.js';

const hop = (where: string, stage: string, text: string, rule = 1) => ({ where, stage, chain: stage.split(' ').pop()!, rule, text });

function branch(reached: string, destination: string, sourceSeen = '10.244.0.2'): TraceDestination {
  return {
    destination, probability: 0.5, masquerade: false, sourceSeen, verdict: 'ACCEPT', reached,
    hops: [
      hop('n1', 'nat PREROUTING', '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES'),
      hop('n1', 'nat KUBE-SERVICES', '-d 10.96.0.10 -p tcp --dport 80 -j KUBE-SVC-X'),
      { where: 'n1', stage: 'route', text: 'route 10.244.1.5 → dev eth0' },
    ],
  };
}

const SIM: TraceResult = {
  packet: { src: '10.244.0.2', dst: '10.96.0.10', proto: 'tcp', sport: 40000, dport: 80 },
  verdict: 'ACCEPT', masquerade: false, hops: [],
  destinations: [branch('pod default/web-1', '10.244.1.5:8080'), branch('pod default/web-2', '10.244.2.7:8080')],
};

function kernel(rules: Array<[string, string]>): KernelTrace {
  return {
    node: 'n1', netns: 'kdp-x-n1', tool: 'xtables-monitor --trace', file: 'f', packets: 3,
    rules: rules.map(([stage, text]) => ({ stage, table: stage.split(' ')[0]!, chain: stage.split(' ')[1]!, text, verdict: 'jump' })),
  };
}

const agreeing = kernel([
  ['nat PREROUTING', '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES'],
  ['nat KUBE-SERVICES', '-d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-X'],
  ['nat POSTROUTING', '-m addrtype ! --dst-type LOCAL -j KDP-MASQ'],
]);

function observed(o: Partial<ObservedOutcome>): ObservedOutcome {
  return { verdict: 'ACCEPT', hops: [], kernel: [agreeing], reached: 'pod default/web-2', destination: '10.244.2.7:8080', sourceSeen: '10.244.0.2', ...o };
}

describe('comparing the kernel with the simulation', () => {
  it('agrees when the kernel took one of the simulated branches with its rules (kdp\'s own rules ignored)', () => {
    const c = compareLive(SIM, observed({}), () => []);
    expect(c.bugs).toEqual([]);
    expect(c.branch?.reached).toBe('pod default/web-2');
    expect(c.rules[0]!.kernel).toEqual(['nat PREROUTING → KUBE-SERVICES', 'nat KUBE-SERVICES → KUBE-SVC-X']);
  });

  it('reports a destination the simulation never reaches', () => {
    const c = compareLive(SIM, observed({ reached: 'pod default/other' }), () => []);
    expect(c.bugs).toEqual([expect.objectContaining({ aspect: 'destination', observed: 'ACCEPT pod default/other' })]);
  });

  it('reports a NATed source or another address than simulated', () => {
    const c = compareLive(SIM, observed({ sourceSeen: '10.244.0.1', destination: '10.244.2.7:9090' }), () => []);
    expect(c.bugs.map((b) => b.aspect).sort()).toEqual(['address', 'source']);
  });

  it('reports a refused probe the simulation delivers, as a verdict bug', () => {
    const c = compareLive(SIM, { verdict: 'REJECT', hops: [], kernel: [] }, () => []);
    expect(c.bugs).toEqual([expect.objectContaining({ aspect: 'verdict', observed: 'REJECT' })]);
  });

  it('reports rules matched on one side only, per node', () => {
    const c = compareLive(SIM, observed({ kernel: [kernel([
      ['nat PREROUTING', '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES'],
      ['filter KUBE-FORWARD', '-m conntrack --ctstate INVALID -j DROP'],
    ])] }), () => []);
    expect(c.bugs).toEqual([expect.objectContaining({
      aspect: 'rules', where: 'n1', simulated: 'also matches nat KUBE-SERVICES → KUBE-SVC-X',
      observed: 'also matched filter KUBE-FORWARD → DROP',
    })]);
  });

  it('reports an interface on the simulated path where the probe was not seen', () => {
    const hops = [{ label: 'node n1 eth0', netns: 'n', iface: 'eth0', file: 'f', packets: 0 }];
    const c = compareLive(SIM, observed({ hops }), () => ['node n1 eth0']);
    expect(c.bugs).toEqual([expect.objectContaining({ aspect: 'path', where: 'node n1 eth0' })]);
  });
});

describe('sampling live checks', () => {
  const topo: Topology = {
    nodes: [],
    pods: ['a', 'b', 'c', 'd'].map((n, i) => ({ name: `default/${n}`, ip: `10.244.0.${i + 2}`, node: 'n1' })),
  };
  const services = [{
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
    spec: { clusterIP: '10.96.0.50', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
  }, {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'kubernetes', namespace: 'default' },
    spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443 }] },
  }] as never[];

  it('draws the same pairs for the same seed, never a pod to itself, only Services with a selector', () => {
    const a = sampleLiveCases({ topo, pods: [], services, n: 5, seed: 7 });
    const b = sampleLiveCases({ topo, pods: [], services, n: 5, seed: 7 });
    expect(a.map((x) => `${x.src.label}>${x.dst.label}`)).toEqual(b.map((x) => `${x.src.label}>${x.dst.label}`));
    expect(a.filter((x) => x.kind === 'pod')).toHaveLength(5);
    expect(a.filter((x) => x.kind === 'pod').every((x) => x.src.ip !== x.dst.ip)).toBe(true);
    expect(a.filter((x) => x.kind === 'service').map((x) => `${x.dst.ip}:${x.dst.port}`)).toEqual(Array(5).fill('10.96.0.50:80'));
    expect(sampleLiveCases({ topo, pods: [], services, n: 5, seed: 8 }).map((x) => x.src.label))
      .not.toEqual(a.map((x) => x.src.label));
  });

  it('has a seeded generator in [0, 1)', () => {
    const r = seededRandom(42);
    const xs = Array.from({ length: 100 }, r);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(seededRandom(42)()).toBe(xs[0]);
  });
});
