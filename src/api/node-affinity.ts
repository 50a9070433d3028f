// Node selection terms as upstream's nodeaffinity helpers: `spec.nodeSelector` must match the
// node's labels, and the required node-affinity terms are ORed (each term's requirements ANDed;
// an empty term matches nothing). `matchFields` supports `metadata.name` only, as upstream.

import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, Taint, Toleration }
  from './types.js';

export function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const has = value !== undefined;
  switch (r.operator) {
    case 'In': return has && (r.values ?? []).includes(value);
    case 'NotIn': return !has || !(r.values ?? []).includes(value);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || (r.values ?? []).length !== 1) return false;
      const a = Number.parseInt(value, 10);
      const b = Number.parseInt(r.values![0]!, 10);
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default: return false;
  }
}

export function termMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  for (const r of exprs) if (!requirementMatches(r, labels[r.key])) return false;
  for (const r of fields) {
    const v = r.key === 'metadata.name' ? node.metadata.name : undefined;
    if (!requirementMatches(r, v)) return false;
  }
  return true;
}

/** nodeSelector and required node affinity (the NodeAffinity filter plugin). */
export function podMatchesNodeSelectorAndAffinity(pod: Pod, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) {
    if (labels[k] !== v) return false;
  }
  const req = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!req) return true;
  return (req.nodeSelectorTerms ?? []).some((t) => termMatches(t, node));
}

/** Upstream ToleratesTaint. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** The first taint with one of `effects` that no toleration tolerates. */
export function firstUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  effects: ReadonlyArray<Taint['effect']>,
): Taint | undefined {
  for (const taint of taints ?? []) {
    if (!effects.includes(taint.effect)) continue;
    if (!(tolerations ?? []).some((t) => toleratesTaint(t, taint))) return taint;
  }
  return undefined;
}
