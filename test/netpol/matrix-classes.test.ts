import { describe, expect, it } from 'vitest';
import type { Namespace, Pod } from '../../src/api/types.js';
import { evaluate } from '../../src/netpol/evaluate.js';
import { reachabilityMatrix } from '../../src/netpol/matrix.js';
import { buildModel, podKey } from '../../src/netpol/model.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';
import { seededRng } from '../../src/scheduler/rng.js';

// Equivalence classes must never change an answer: on seeded random clusters the class-based
// matrix equals the cell-by-cell evaluation for several ports and protocols.
function cluster(seed: number) {
  const rand = seededRng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const namespaces = Array.from({ length: 4 }, (_, i) => ({ apiVersion: 'v1', kind: 'Namespace',
    metadata: { name: `ns${i}`, labels: { team: `t${i % 2}` } } }) as Namespace);
  const pods = Array.from({ length: 40 }, (_, i) => ({ apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `p${i}`, namespace: `ns${i % 4}`,
      labels: { app: `a${Math.floor(rand() * 5)}`, tier: pick(['web', 'db']) } },
    spec: { nodeName: `n${i % 3}`, containers: [{ name: 'c', image: 'x', ports: [
      { name: 'http', containerPort: pick([80, 81]), protocol: 'TCP' }] }] },
    status: { podIP: `10.244.${i % 3}.${i + 2}` } }) as unknown as Pod);

  const peer = () => pick([
    { podSelector: { matchLabels: { app: `a${Math.floor(rand() * 5)}` } } },
    { namespaceSelector: { matchLabels: { team: pick(['t0', 't1']) } } },
    { namespaceSelector: {}, podSelector: { matchLabels: { tier: pick(['web', 'db']) } } },
    { ipBlock: { cidr: '10.244.0.0/16', except: [`10.244.${Math.floor(rand() * 3)}.0/24`] } },
  ]);
  const port = () => pick([{ port: 80 }, { port: 'http' }, { port: 79, endPort: 80 },
    { protocol: 'UDP' }]);
  const policies = Array.from({ length: 15 }, (_, i) => ({ apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy', metadata: { name: `np${i}`, namespace: `ns${i % 4}` },
    spec: { podSelector: { matchLabels: { app: `a${Math.floor(rand() * 5)}` } },
      ingress: [{ from: [peer()], ports: [port()] }],
      ...(i % 2 ? { egress: [{ to: [peer(), peer()], ports: [port()] }] } : {}) } }) as
    unknown as NetworkPolicy);
  return buildModel({ pods, namespaces, policies });
}

describe('reachability matrix by equivalence classes', () => {
  for (const seed of [1, 2, 3]) {
    it(`equals cell-by-cell evaluation (seed ${seed})`, () => {
      const m = cluster(seed);
      for (const [port, protocol] of [[80, 'TCP'], [81, 'TCP'], [80, 'UDP']] as const) {
        const r = reachabilityMatrix(m, port, protocol);
        expect(r.classes).toBeLessThan(m.pods.length);
        for (const f of m.pods) {
          for (const t of m.pods) {
            expect(r.table.get(podKey(f), podKey(t)), `${podKey(f)}→${podKey(t)} ${protocol}/${port}`)
              .toBe(evaluate(m, { from: { pod: f }, to: t, port, protocol }).allowed);
          }
        }
      }
    });
  }
});
