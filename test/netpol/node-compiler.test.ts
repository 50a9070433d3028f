// The node agent's incremental compiler gives, after every change of a random sequence, exactly
// the text a compile from scratch gives, and recomputes only what the change can affect.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { buildModel } from '../../src/netpol/model.js';
import { buildNodeCompiler } from '../../src/netpol/node-compiler.js';
import { compileNetpolNftables } from '../../src/netpol/nftables.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';
import { NODES, NODE_IPS, randomSnapshots } from './random-cluster.js';
import { UPSTREAM_SCENARIOS } from './scenarios/upstream-e2e.js';
import { playScenario } from './scenarios/run.js';

describe('incremental node compiler', () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: 150 random changes, every node's text byte-identical to a full compile`, () => {
      const compilers = new Map(NODES.map((n) => [n, buildNodeCompiler(n)]));
      let partial = 0;
      for (const s of randomSnapshots(seed, 150)) {
        const m = buildModel({ ...s, nodeIPs: NODE_IPS });
        for (const n of NODES) {
          const c = compilers.get(n)!;
          expect(c.compile(m), `${s.change} (node ${n})`).toBe(compileNetpolNftables(m, { node: n }));
          if (!c.last.full) partial++;
        }
      }
      expect(partial).toBe(150 * NODES.length);
    });
  }

  it('every upstream scenario step, played through one compiler per node, matches a full compile', () => {
    for (const s of UPSTREAM_SCENARIOS) {
      const compilers = new Map<string, ReturnType<typeof buildNodeCompiler>>();
      for (const { model } of playScenario(s)) {
        for (const n of model.nodeIPs.keys()) {
          if (!compilers.has(n)) compilers.set(n, buildNodeCompiler(n));
          expect(compilers.get(n)!.compile(model), s.name).toBe(compileNetpolNftables(model, { node: n }));
        }
      }
    }
  });

  it('recomputes only what a change affects', () => {
    const [start] = randomSnapshots(7, 0);
    const c = buildNodeCompiler('n1');
    const base = buildModel({ ...start!, nodeIPs: NODE_IPS });
    c.compile(base);
    expect(c.last.full).toBe(true);
    // The same objects again: nothing changed, nothing recomputed.
    c.compile(buildModel({ ...start!, nodeIPs: NODE_IPS }));
    expect(c.last).toMatchObject({ full: false, pods: 0, policies: 0, chains: 0, sets: 0 });
    // A pod of another node relabelled to a label no policy names: its old version may have
    // been in peer sets (those are recomputed), but no chain of n1's is.
    const i = start!.pods.findIndex((p) => p.spec!.nodeName !== 'n1');
    const pods = start!.pods.map((p, k) => (k === i
      ? { ...p, metadata: { ...p.metadata, labels: { app: 'nobody' } } } as Pod : p));
    c.compile(buildModel({ ...start!, pods, nodeIPs: NODE_IPS }));
    expect(c.last).toMatchObject({ pods: 2, chains: expect.any(Number) });
    const chainsWithEveryPod = c.last.chains;
    // A policy in a namespace none of n1's pods is in: no chain, no set recomputed.
    const ns = 'elsewhere';
    const np = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny', namespace: ns },
      spec: { podSelector: {}, policyTypes: ['Ingress'] } } as NetworkPolicy;
    c.compile(buildModel({ ...start!, pods, policies: [...start!.policies, np], nodeIPs: NODE_IPS }));
    expect(c.last).toMatchObject({ pods: 0, policies: 1, chains: 0, sets: 0 });
    // Only chains with egress named-port rules (their addresses are every pod's) may follow a
    // pod change of another node; they are few.
    const total = (compileNetpolNftables(base, { node: 'n1' }).match(/^add chain .* (ingress|egress)-/gm) ?? []).length;
    expect(chainsWithEveryPod).toBeLessThan(total);
  });
});
