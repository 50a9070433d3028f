// Incremental table updates: element-only changes become flush + refill of just the changed
// sets/maps; anything structural is a full rewrite. With root, the kernel applier's incremental
// transaction leaves exactly the table a full apply of the new text gives.

import { afterAll, describe, expect, it } from 'vitest';
import type { Namespace, Pod } from '../../src/api/types.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { buildKernelNetpolApplier } from '../../src/netpol/applier.js';
import { netpolDelta } from '../../src/netpol/delta.js';
import { buildModel } from '../../src/netpol/model.js';
import { compileNetpolNftables } from '../../src/netpol/nftables.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const ns = (name: string, labels: Record<string, string> = {}): Namespace => ({ metadata: { name, labels } }) as Namespace;
const pod = (namespace: string, name: string, node: string, ip: string, labels: Record<string, string> = {}): Pod =>
  ({ metadata: { namespace, name, labels }, spec: { nodeName: node, containers: [] },
    status: { podIP: ip, podIPs: [{ ip }] } }) as unknown as Pod;
const allowFromX: NetworkPolicy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { namespace: 'y', name: 'allow-x' },
  spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }] } } as NetworkPolicy;
const denyX: NetworkPolicy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { namespace: 'x', name: 'deny' }, spec: { podSelector: {} } } as NetworkPolicy;

const compile = (pods: Pod[], namespaces: Namespace[], policies: NetworkPolicy[]) =>
  compileNetpolNftables(buildModel({ pods, namespaces, policies, nodeIPs: new Map([['n1', ['172.18.0.2']]]) }), { node: 'n1' });

const base = [pod('x', 'a', 'n1', '10.244.1.2'), pod('y', 'b', 'n1', '10.244.1.3')];
const A = compile(base, [ns('x', { team: 'x' }), ns('y')], [allowFromX]);
// A pod of x starts on another node: only the peer set changes.
const B = compile([...base, pod('x', 'd', 'n2', '10.244.2.5')], [ns('x', { team: 'x' }), ns('y')], [allowFromX]);
// x is relabelled: the peer set empties.
const C = compile(base, [ns('x'), ns('y')], [allowFromX]);
// A new pod of y on this node: the verdict map gains an element, and a chain — structural.
const D = compile([...base, pod('y', 'e', 'n1', '10.244.1.9')], [ns('x', { team: 'x' }), ns('y')], [allowFromX]);
// A new policy: structural.
const E = compile(base, [ns('x', { team: 'x' }), ns('y')], [allowFromX, denyX]);

describe('netpolDelta', () => {
  it('equal texts: nothing to do', () => {
    expect(netpolDelta(A, A)).toBe('');
  });

  it('a peer set gaining an address: flush and refill that set only', () => {
    const d = netpolDelta(A, B)!;
    expect(d).toBe('flush set inet kdp-netpol peers-y/allow-x/ingress-0-v4\n' +
      'add element inet kdp-netpol peers-y/allow-x/ingress-0-v4 { 10.244.1.2, 10.244.2.5 }\n');
  });

  it('a set emptied: flushed, nothing added', () => {
    expect(netpolDelta(A, C)).toBe('flush set inet kdp-netpol peers-y/allow-x/ingress-0-v4\n');
  });

  it('chains, rules or sets added: a full rewrite', () => {
    expect(netpolDelta(A, D)).toBeUndefined();
    expect(netpolDelta(A, E)).toBeUndefined();
  });
});

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter']))('incremental apply in a namespace', () => {
  const exec = buildHostExec();
  const made: string[] = [];
  const fresh = async () => { const n = testNetnsName(); made.push(n); await ensureNetns(exec, n); return n; };
  const list = async (n: string) => (await exec.run('nft', ['list', 'table', 'inet', 'kdp-netpol'], { netns: n })).stdout;
  afterAll(async () => { for (const n of made) await deleteNetns(exec, n).catch(() => undefined); });

  it('leaves exactly the table a full apply gives; structural changes go in full', async () => {
    const n = await fresh();
    const applier = buildKernelNetpolApplier(exec, n);
    await applier.apply(A);
    for (const next of [B, C, A]) {
      await applier.apply(next);
      const ref = await fresh();
      await exec.run('nft', ['-f', '-'], { netns: ref, input: next });
      expect(await list(n)).toBe(await list(ref));
    }
    expect(applier.stats).toEqual({ full: 1, incremental: 3 });
    await applier.apply(E);
    expect(applier.stats.full).toBe(2);
    expect(await list(n)).toContain('chain ingress-x/a');
  });

  it('an incremental update the kernel refuses falls back to the full text', async () => {
    const n = await fresh();
    const applier = buildKernelNetpolApplier(exec, n);
    await applier.apply(A);
    // Behind kdp's back: the set is gone, so flushing it fails.
    await exec.run('nft', ['-f', '-'], { netns: n, input: 'add table inet kdp-netpol\ndelete table inet kdp-netpol\n' });
    await applier.apply(B);
    expect(applier.stats).toEqual({ full: 2, incremental: 0 });
    expect(await list(n)).toContain('10.244.2.5');
  });
});
