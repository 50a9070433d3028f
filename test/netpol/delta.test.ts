// Incremental table updates: the transaction holds only what changed (elements added or
// deleted, chains added, re-filled or deleted, sets added or deleted); only a change of the
// table's fixed part is a full rewrite. With root, the kernel applier's incremental transactions
// leave exactly the table a full apply of the new text gives, over a random sequence of changes.

import { afterAll, describe, expect, it } from 'vitest';
import type { Namespace, Pod } from '../../src/api/types.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { buildKernelNetpolApplier } from '../../src/netpol/applier.js';
import { netpolDelta } from '../../src/netpol/delta.js';
import { buildModel } from '../../src/netpol/model.js';
import { compileNetpolNftables } from '../../src/netpol/nftables.js';
import { buildNodeCompiler } from '../../src/netpol/node-compiler.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { NODE_IPS, randomSnapshots } from './random-cluster.js';

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
// A new pod of y on this node: the verdict map gains an element, and a chain.
const D = compile([...base, pod('y', 'e', 'n1', '10.244.1.9')], [ns('x', { team: 'x' }), ns('y')], [allowFromX]);
// A new policy: x/a becomes isolated (a chain and a map entry).
const E = compile(base, [ns('x', { team: 'x' }), ns('y')], [allowFromX, denyX]);

describe('netpolDelta', () => {
  it('equal texts: nothing to do', () => {
    expect(netpolDelta(A, A)).toBe('');
  });

  it('a peer set gaining an address: that element added, nothing else', () => {
    expect(netpolDelta(A, B)).toBe(
      'add element inet kdp-netpol peers-y/allow-x/ingress-0-v4 { 10.244.2.5 }\n');
  });

  it('a set emptied: its element deleted', () => {
    expect(netpolDelta(A, C)).toBe('delete element inet kdp-netpol peers-y/allow-x/ingress-0-v4 { 10.244.1.2 }\n');
  });

  it('a pod becoming isolated: its chain and rules, then its verdict-map entry', () => {
    expect(netpolDelta(A, D)).toBe([
      'add chain inet kdp-netpol ingress-y/e',
      ...D.split('\n').filter((l) => l.startsWith('add rule inet kdp-netpol ingress-y/e ')),
      'add element inet kdp-netpol ingress-pods-v4 { 10.244.1.9 : jump ingress-y/e }', ''].join('\n'));
  });

  it('a policy deleted: map entries first, then the chain is flushed and deleted, then its sets', () => {
    const d = netpolDelta(E, A)!;
    expect(d.split('\n').filter(Boolean)).toEqual([
      'delete element inet kdp-netpol ingress-pods-v4 { 10.244.1.2 }',
      'flush chain inet kdp-netpol ingress-x/a',
      'delete chain inet kdp-netpol ingress-x/a',
    ]);
  });

  it('the fixed part changed (another node, a new address family): a full rewrite', () => {
    expect(netpolDelta(A, A.replace(/on node n1/g, 'on node n2'))).toBeUndefined();
    const v6 = compile([...base, pod('x', 'v', 'n2', 'fd00::5')], [ns('x', { team: 'x' }), ns('y')], [allowFromX]);
    expect(netpolDelta(A, v6)).toBeUndefined();
  });
});

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter']))('incremental apply in a namespace', () => {
  const exec = buildHostExec();
  const made: string[] = [];
  const fresh = async () => { const n = testNetnsName(); made.push(n); await ensureNetns(exec, n); return n; };
  const list = async (n: string) => (await exec.run('nft', ['list', 'table', 'inet', 'kdp-netpol'], { netns: n })).stdout;
  afterAll(async () => { for (const n of made) await deleteNetns(exec, n).catch(() => undefined); });

  /** `nft list table` with objects and elements in a canonical order (a chain added by a delta
   *  is listed after the others; a full apply lists it in its sorted place). */
  const canonical = (listing: string): string => {
    const blocks: string[] = [];
    let cur: string[] | undefined;
    for (const line of listing.split('\n')) {
      if (/^\t(chain|set|map) /.test(line)) cur = [line];
      else if (cur && line === '\t}') { cur.push(line); blocks.push(cur.join('\n')); cur = undefined; }
      else if (cur) cur.push(line);
    }
    return blocks.map((b) => b.replace(/elements = \{([^}]*)\}/, (_m, els: string) =>
      `elements = { ${els.split(',').map((e) => e.trim()).filter(Boolean).sort().join(', ')} }`)).sort().join('\n');
  };

  it('leaves exactly the table a full apply gives: elements, new, changed and deleted chains', async () => {
    const n = await fresh();
    const ref = await fresh();
    const applier = buildKernelNetpolApplier(exec, n);
    await applier.apply(A);
    for (const next of [B, C, A, D, E, A, D]) {
      await applier.apply(next);
      await exec.run('nft', ['-f', '-'], { netns: ref, input: next });
      expect(canonical(await list(n))).toBe(canonical(await list(ref)));
    }
    expect(applier.stats).toEqual({ full: 1, incremental: 7 });
    expect(await list(n)).toContain('chain ingress-y/e');
  });

  it('over 40 random changes of a 3-node cluster, every delta is taken and leaves the full table', async () => {
    const n = await fresh();
    const ref = await fresh();
    const applier = buildKernelNetpolApplier(exec, n);
    const c = buildNodeCompiler('n1');
    for (const s of randomSnapshots(11, 40)) {
      const text = c.compile(buildModel({ ...s, nodeIPs: NODE_IPS }));
      await applier.apply(text);
      await exec.run('nft', ['-f', '-'], { netns: ref, input: text });
      expect(canonical(await list(n)), s.change).toBe(canonical(await list(ref)));
    }
    expect(applier.stats.full).toBe(1);
    expect(applier.stats.incremental).toBeGreaterThan(20);
  }, 120_000);

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
