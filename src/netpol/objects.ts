// Builds the evaluator's model from plain API objects (a manifest, or a cluster's lists):
// Namespaces, Pods, NetworkPolicies, and Nodes for their InternalIPs. Other kinds are ignored.

import type { KubeObject } from '../client/types.js';
import type { Namespace, Pod } from '../api/types.js';
import { buildModel } from './model.js';
import type { NetpolModel } from './model.js';
import type { NetworkPolicy } from './types.js';

export function nodeIPsOf(nodes: readonly KubeObject[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const n of nodes) {
    const addrs = ((n.status as { addresses?: Array<{ type?: string; address?: string }> })
      ?.addresses ?? []).filter((a) => a.type === 'InternalIP' && a.address)
      .map((a) => a.address!);
    out.set(n.metadata?.name ?? '', addrs);
  }
  return out;
}

export function modelFromObjects(objs: readonly KubeObject[]): NetpolModel {
  const of = (kind: string): KubeObject[] => objs.filter((o) => o.kind === kind);
  return buildModel({
    namespaces: of('Namespace') as unknown as Namespace[],
    pods: of('Pod') as unknown as Pod[],
    policies: of('NetworkPolicy').filter((o) => o.apiVersion === 'networking.k8s.io/v1')
      .map((o) => ({ ...o, metadata: { namespace: 'default', ...o.metadata } })) as NetworkPolicy[],
    nodeIPs: nodeIPsOf(of('Node')),
  });
}
