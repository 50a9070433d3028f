import { describe, expect, it } from 'vitest';
import { compileNetpolNftables } from '../../src/netpol/nftables.js';
import { isAllowed } from '../../src/netpol/evaluate.js';
import type { NetpolModel } from '../../src/netpol/model.js';
import { podKey } from '../../src/netpol/model.js';
import { netpolNodeView, withNetpol } from '../../src/trace/netpol-stage.js';
import { foldArrivals } from '../../src/trace/result.js';
import type { NodeFilter, Topology, TracePodInfo } from '../../src/trace/topology.js';
import { walk } from '../../src/trace/walk.js';
import { verdictLabel } from '../../src/trace/world.js';
import { playScenario } from '../netpol/scenarios/run.js';
import { ALL_PODS, NODE_IPS, ipOf, nodeOf } from '../netpol/scenarios/cluster.js';
import { KDP_SCENARIOS, UPSTREAM_SCENARIOS } from '../netpol/scenarios/upstream-e2e.js';
import type { Protocol } from '../netpol/scenarios/builders.js';
import { egress, ingress, policy, policyML } from '../netpol/scenarios/builders.js';
import { buildModel } from '../../src/netpol/model.js';
import { namespace, pod } from '../netpol/scenarios/cluster.js';

/** No kube-proxy rules: only routing and the NetworkPolicy stage decide. */
const PASS: NodeFilter = { mode: 'none', runHook: (_h, worlds) => [...worlds] };

function topologyOf(m: NetpolModel): Topology {
  const pods: TracePodInfo[] = m.pods.map((p) => ({ name: podKey(p), ip: p.ips[0]!, node: p.node! }));
  return {
    pods,
    nodes: ['n1', 'n2', 'n3'].map((n, i) => ({
      name: n, nodeIPs: NODE_IPS.get(n)!, podCIDRs: [`10.244.${i + 1}.0/24`], bridge: 'cni0',
      gatewayIPs: [`10.244.${i + 1}.1`], underlayIface: 'eth0',
      filter: withNetpol(PASS, netpolNodeView(n, compileNetpolNftables(m, { node: n }),
        new Map(pods.filter((p) => p.node === n).map((p) => [p.ip, p.name])))),
    })),
  };
}

function trace(topo: Topology, from: string, to: string, port: number, proto: Protocol) {
  const pkt = { src: ipOf(from), dst: ipOf(to), proto: proto.toLowerCase() as 'tcp', sport: 40000, dport: port };
  return foldArrivals(pkt, walk(topo, { kind: 'pod', pod: from, node: nodeOf(from) }, pkt));
}

describe('kdp trace: the NetworkPolicy stage', () => {
  it('agrees with the evaluator on every cell of every scenario (the compiled tables decide)', () => {
    let cells = 0;
    for (const s of [...UPSTREAM_SCENARIOS, ...KDP_SCENARIOS]) {
      for (const { check, model: m } of playScenario(s)) {
        const topo = topologyOf(m);
        for (const from of m.pods) {
          for (const to of m.pods) {
            if (from === to) continue;
            const t = trace(topo, podKey(from), podKey(to), check.port, check.protocol);
            const want = isAllowed(m, { from: { pod: from }, to, port: check.port, protocol: check.protocol });
            expect(`${s.name} ${podKey(from)}→${podKey(to)} ${t.verdict}`)
              .toBe(`${s.name} ${podKey(from)}→${podKey(to)} ${want ? 'ACCEPT' : 'DROP'}`);
            cells++;
          }
        }
      }
    }
    expect(cells).toBeGreaterThan(500);
  });

  const model = (...policies: ReturnType<typeof policy>[]) => buildModel({
    pods: ALL_PODS.map((k) => pod(k)), namespaces: ['x', 'y', 'z'].map((n) => namespace(n)),
    policies, nodeIPs: NODE_IPS,
  });

  it('names the allowing policy and rule at the source egress and destination ingress, on their own nodes', () => {
    const m = model(
      policyML('x', 'a-out', { pod: 'a' }, egress({ to: [{ podSelector: {} }] }, { ports: [{ port: 80 }] })),
      policyML('y', 'b-in', { pod: 'b' }, ingress({ ports: [{ port: 81 }] }, { ports: [{ port: 80 }] })));
    const t = trace(topologyOf(m), 'x/a', 'y/b', 80, 'TCP');
    expect(t.verdict).toBe('ACCEPT');
    const np = t.hops.filter((h) => h.stage.startsWith('netpol'));
    expect(np).toEqual([
      { where: 'n1', stage: 'netpol egress', chain: 'egress-x/a', rule: 2,
        text: 'egress of x/a: allowed by policy x/a-out egress rule 1' },
      { where: 'n2', stage: 'netpol ingress', chain: 'ingress-y/b', rule: 3,
        text: 'ingress of y/b: allowed by policy y/b-in ingress rule 1' },
    ]);
  });

  it('says when no policy selects a pod, and routes the packet through both nodes', () => {
    const t = trace(topologyOf(model()), 'x/a', 'z/c', 81, 'UDP');
    expect(t.verdict).toBe('ACCEPT');
    expect(t.hops.filter((h) => h.stage.startsWith('netpol')).map((h) => `${h.where} ${h.text}`)).toEqual([
      'n1 egress of x/a: no policy selects this pod: allowed',
      'n3 ingress of z/c: no policy selects this pod: allowed',
    ]);
  });

  it('a default-deny drop is DROP (policy ns/name) naming every isolating policy', () => {
    const m = model(policy('y', 'deny', {}, ingress()), policy('y', 'only-81', {}, ingress({ ports: [{ port: 81 }] })));
    const t = trace(topologyOf(m), 'x/a', 'y/b', 80, 'TCP');
    expect(t.verdict).toBe('DROP');
    expect(verdictLabel(t.verdict, t.dropBy)).toBe('DROP (policy y/deny, y/only-81)');
    const last = t.hops[t.hops.length - 1]!;
    expect(last).toMatchObject({ where: 'n2', stage: 'netpol ingress', chain: 'ingress-y/b',
      text: 'ingress of y/b: denied: isolated for ingress by y/deny, y/only-81 and no ingress rule allows it' });
    expect(t.destinations[0]).toMatchObject({ verdict: 'DROP', dropBy: 'policy y/deny, y/only-81', reached: 'dropped' });
    // An egress drop stops at the source's node: the destination's ingress is never judged.
    const e = trace(topologyOf(model(policy('x', 'no-out', {}, egress()))), 'x/a', 'y/b', 80, 'TCP');
    expect(verdictLabel(e.verdict, e.dropBy)).toBe('DROP (policy x/no-out)');
    expect(e.hops.filter((h) => h.stage.startsWith('netpol')).map((h) => h.where)).toEqual(['n1']);
  });

  it("traffic from the pod's own node is allowed, and said so", () => {
    const m = model(policy('y', 'deny', {}, ingress()));
    const topo = topologyOf(m);
    const pkt = { src: '172.18.0.3', dst: ipOf('y/b'), proto: 'tcp' as const, sport: 40000, dport: 80 };
    // The node's own traffic leaves through OUTPUT, not forward: no policy stage at all.
    const local = foldArrivals(pkt, walk(topo, { kind: 'node', node: 'n2' }, pkt));
    expect(local.verdict).toBe('ACCEPT');
    // Arriving from outside with the node's address (e.g. after SNAT elsewhere): the rule allows it.
    const fwd = foldArrivals(pkt, walk(topo, { kind: 'external', node: 'n2' }, pkt));
    expect(fwd.verdict).toBe('ACCEPT');
    expect(fwd.hops.find((h) => h.stage === 'netpol ingress')?.text)
      .toBe("ingress of y/b: from the pod's node: allowed");
  });
});
