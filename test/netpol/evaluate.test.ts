import { describe, expect, it } from 'vitest';
import { buildModel } from '../../src/netpol/model.js';
import type { PodInfo } from '../../src/netpol/model.js';
import { evaluate } from '../../src/netpol/evaluate.js';
import { reachabilityMatrix } from '../../src/netpol/matrix.js';
import { Reachability, TruthTable, summarize } from '../../src/netpol/truth-table.js';
import { ALL_PODS, NAMESPACES, NODE_IPS, namespace, pod } from './scenarios/cluster.js';
import { egress, ingress, nsSel, podSel, policy, policyML } from './scenarios/builders.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';

function model(policies: NetworkPolicy[], pods = ALL_PODS) {
  return buildModel({ pods: pods.map((k) => pod(k)), namespaces: NAMESPACES.map((n) => namespace(n)),
    policies, nodeIPs: NODE_IPS });
}
const find = (m: ReturnType<typeof model>, k: string): PodInfo =>
  m.pods.find((p) => `${p.namespace}/${p.name}` === k)!;

describe('evaluate: a connection and its reason', () => {
  it('no policy selects either pod: allowed, and says so', () => {
    const m = model([]);
    const v = evaluate(m, { from: { pod: find(m, 'x/a') }, to: find(m, 'y/b'), port: 80,
      protocol: 'TCP' });
    expect(v.allowed).toBe(true);
    expect(v.reason).toBe('egress: no policy selects x/a; ingress: no policy selects y/b');
  });
  it('names the policy and rule that allowed, and the isolating policies that denied', () => {
    const m = model([policyML('x', 'deny', {}, ingress()),
      policyML('x', 'allow-b', { pod: 'a' }, ingress({ ports: [{ port: 81 }] },
        { from: [{ podSelector: podSel('b') }] }))]);
    const ok = evaluate(m, { from: { pod: find(m, 'x/b') }, to: find(m, 'x/a'), port: 80,
      protocol: 'TCP' });
    expect(ok.allowed).toBe(true);
    expect(ok.reason).toBe('egress: no policy selects x/b; ingress: allowed by x/allow-b '
      + 'ingress rule 1');
    const no = evaluate(m, { from: { pod: find(m, 'x/c') }, to: find(m, 'x/a'), port: 80,
      protocol: 'TCP' });
    expect(no.allowed).toBe(false);
    expect(no.ingress.isolatedBy).toEqual(['x/deny', 'x/allow-b']);
    expect(no.reason).toContain('ingress: denied: x/a is isolated for ingress by x/deny, '
      + 'x/allow-b and no ingress rule allows it');
  });
  it("traffic from the destination pod's own node is allowed; from another node it is not", () => {
    const m = model([policy('x', 'deny', {}, ingress())]);
    const to = find(m, 'x/a');
    expect(evaluate(m, { from: { ip: '172.18.0.2' }, to, port: 80, protocol: 'TCP' }).allowed)
      .toBe(true);
    expect(evaluate(m, { from: { ip: '172.18.0.3' }, to, port: 80, protocol: 'TCP' }).allowed)
      .toBe(false);
  });
  it('an ipBlock admits external IPs in the cidr but not in except', () => {
    const m = model([policy('x', 'ext', {}, ingress({ from: [{ ipBlock: { cidr: '192.0.2.0/24',
      except: ['192.0.2.128/25'] } }] }))]);
    const to = find(m, 'x/a');
    const at = (ip: string) => evaluate(m, { from: { ip }, to, port: 80, protocol: 'TCP' }).allowed;
    expect([at('192.0.2.1'), at('192.0.2.200'), at('198.51.100.1')]).toEqual([true, false, false]);
  });
  it('namespaceSelector and podSelector in one peer are ANDed; in two peers ORed', () => {
    const and = model([policyML('x', 'p', { pod: 'a' }, ingress({ from: [
      { namespaceSelector: nsSel('y'), podSelector: podSel('b') }] }))]);
    const or = model([policyML('x', 'p', { pod: 'a' }, ingress({ from: [
      { namespaceSelector: nsSel('y') }, { podSelector: podSel('b') }] }))]);
    const cell = (m: ReturnType<typeof model>, f: string) => evaluate(m, { from: { pod: find(m, f) },
      to: find(m, 'x/a'), port: 80, protocol: 'TCP' }).allowed;
    expect(['y/a', 'y/b', 'x/b', 'z/b'].map((f) => cell(and, f))).toEqual([false, true, false,
      false]);
    expect(['y/a', 'y/b', 'x/b', 'z/b'].map((f) => cell(or, f))).toEqual([true, true, true, false]);
  });
  it('egress isolation does not isolate ingress (policyTypes as given)', () => {
    const m = model([policy('x', 'eg', {}, egress())]);
    expect(evaluate(m, { from: { pod: find(m, 'y/a') }, to: find(m, 'x/a'), port: 80,
      protocol: 'TCP' }).allowed).toBe(true);
  });
});

describe('reachability matrix', () => {
  it('is printed as upstream PrettyPrint: header "-" then tos, tab-separated, . and X', () => {
    const m = model([policy('x', 'deny', {}, ingress())], ['x/a', 'y/a']);
    expect(reachabilityMatrix(m, 80, 'TCP').table.prettyPrint())
      .toBe('-\tx/a\ty/a\nx/a\tX\t.\ny/a\tX\t.');
  });
  it('evaluates each pair of equivalence classes once', () => {
    // deny-all in x: x's pods are alike (isolated, no peer), y's and z's are alike (untouched).
    const r = reachabilityMatrix(model([policy('x', 'deny', {}, ingress())]), 80, 'TCP');
    expect([r.classes, r.evaluations]).toEqual([2, 4]);
    // A peer that matches only y/b splits it from the others.
    const p = reachabilityMatrix(model([policy('x', 'deny', {}, ingress({ from: [
      { namespaceSelector: nsSel('y'), podSelector: podSel('b') }] }))]), 80, 'TCP');
    expect([p.classes, p.evaluations]).toEqual([3, 9]);
    expect(p.table.get('y/b', 'x/a')).toBe(true);
    expect(p.table.get('y/c', 'x/a')).toBe(false);
    // No policy at all: one class, one evaluation for 81 cells.
    const same = reachabilityMatrix(model([]), 80, 'TCP');
    expect([same.classes, same.evaluations]).toEqual([1, 1]);
  });
  it('a wrong expectation is reported as incorrect (loopback ignored), as upstream Summary', () => {
    const m = model([policy('x', 'deny', {}, ingress())], ['x/a', 'x/b', 'y/a']);
    const observed = reachabilityMatrix(m, 80, 'TCP').table;
    const wrong = new Reachability(['x/a', 'x/b', 'y/a'], true);
    const s = summarize(wrong.expected, observed);
    expect(s.line).toBe('reachability: correct:2, incorrect:4, result=false');
    expect(s.ignored).toBe(3);
    expect(TruthTable.parse(observed.prettyPrint()).prettyPrint()).toBe(observed.prettyPrint());
  });
});
