// Plays a scenario's steps and yields, for every check, the model at that moment.

import type { Namespace, Pod } from '../../../src/api/types.js';
import { buildModel } from '../../../src/netpol/model.js';
import type { NetpolModel } from '../../../src/netpol/model.js';
import type { NetworkPolicy } from '../../../src/netpol/types.js';
import { NAMESPACES, NODE_IPS, namespace, pod } from './cluster.js';
import type { Check, Scenario } from './builders.js';

const key = (p: NetworkPolicy): string => `${p.metadata.namespace}/${p.metadata.name}`;

export interface CheckAt {
  readonly step: number;
  readonly check: Check;
  readonly model: NetpolModel;
}

export function* playScenario(s: Scenario): Generator<CheckAt> {
  const nsLabels = new Map<string, Record<string, string>>();
  const podLabels = new Map<string, Record<string, string>>();
  let policies: NetworkPolicy[] = [];
  for (let i = 0; i < s.steps.length; i++) {
    const step = s.steps[i]!;
    for (const d of step.delete ?? []) {
      policies = d === '*' ? [] : policies.filter((p) => key(p) !== d);
    }
    for (const p of step.apply ?? []) {
      const at = policies.findIndex((q) => key(q) === key(p));
      if (at >= 0) policies[at] = p; else policies.push(p);
    }
    for (const [k, v] of Object.entries(step.podLabels ?? {})) podLabels.set(k, v);
    for (const [k, v] of Object.entries(step.namespaceLabels ?? {})) nsLabels.set(k, v);
    const pods: Pod[] = s.pods.map((k) => pod(k, podLabels.get(k)));
    const namespaces: Namespace[] = NAMESPACES.map((n) => {
      const ns = namespace(n);
      if (nsLabels.has(n)) ns.metadata.labels = nsLabels.get(n);
      return ns;
    });
    const model = buildModel({ pods, namespaces, policies, nodeIPs: NODE_IPS });
    for (const check of step.checks) yield { step: i, check, model };
  }
}
