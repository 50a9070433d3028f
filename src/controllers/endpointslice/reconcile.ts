// Plans the writes that bring a Service's EndpointSlices to the desired groups, keeping
// endpoints in the slice they are already in (as upstream's reconciler does, to limit churn):
// existing slices drop endpoints that went away and refresh changed ones; new endpoints fill
// slices with room first, then new slices of at most `max`; slices left empty or with a stale
// port set are deleted. A Service with no endpoints keeps one empty placeholder slice.

import type { Endpoint, EndpointSlice, Service } from '../../api/types.js';
import { portsKey, type EndpointGroup } from './desired.js';

export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const MANAGED_BY = 'endpointslice-controller.k8s.io';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface SlicePlan {
  readonly create: EndpointSlice[];
  readonly update: EndpointSlice[];
  readonly remove: EndpointSlice[];
}

export function sliceLabels(svc: Service): Record<string, string> {
  const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
  labels[SERVICE_NAME_LABEL] = svc.metadata.name!;
  labels[MANAGED_BY_LABEL] = MANAGED_BY;
  if (svc.spec?.clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
  return labels;
}

export function newSlice(
  svc: Service, addressType: 'IPv4' | 'IPv6', group: EndpointGroup | undefined,
  endpoints: Endpoint[],
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: {
      generateName: `${svc.metadata.name}-`,
      namespace: svc.metadata.namespace,
      labels: sliceLabels(svc),
      ownerReferences: [{
        apiVersion: 'v1', kind: 'Service', name: svc.metadata.name!, uid: svc.metadata.uid!,
        controller: true, blockOwnerDeletion: true,
      }],
    },
    addressType,
    endpoints,
    ...(group ? { ports: group.ports } : {}),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function planSlices(
  svc: Service, addressType: 'IPv4' | 'IPv6', groups: Map<string, EndpointGroup>,
  existing: readonly EndpointSlice[], max: number,
): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], remove: [] };
  const labels = sliceLabels(svc);
  const total = [...groups.values()].reduce((n, g) => n + g.endpoints.size, 0);
  const mine = existing.filter((s) => s.addressType === addressType);
  if (total === 0) return placeholder(svc, addressType, mine, plan);
  const byGroup = new Map<string, EndpointSlice[]>();
  for (const s of mine) {
    const k = portsKey(s.ports);
    if (!groups.has(k)) { plan.remove.push(s); continue; }
    (byGroup.get(k) ?? byGroup.set(k, []).get(k)!).push(s);
  }
  for (const [k, g] of groups) {
    const want = new Map(g.endpoints);
    const kept: Array<{ slice: EndpointSlice; eps: Endpoint[]; changed: boolean }> = [];
    for (const s of byGroup.get(k) ?? []) {
      const eps: Endpoint[] = [];
      let changed = !same(s.metadata.labels, labels);
      for (const ep of s.endpoints ?? []) {
        const d = want.get(ep.addresses[0]!);
        if (!d) { changed = true; continue; }
        want.delete(ep.addresses[0]!);
        if (!same(d, ep)) changed = true;
        eps.push(d);
      }
      kept.push({ slice: s, eps, changed });
    }
    const rest = [...want.values()];
    // Fill slices being changed anyway first, then the others, then new ones.
    kept.sort((a, b) => Number(b.changed) - Number(a.changed));
    for (const k2 of kept) {
      while (rest.length && k2.eps.length < max) { k2.eps.push(rest.shift()!); k2.changed = true; }
    }
    for (const k2 of kept) {
      if (k2.eps.length === 0) plan.remove.push(k2.slice);
      else if (k2.changed) {
        plan.update.push({ ...k2.slice, metadata: { ...k2.slice.metadata, labels },
          endpoints: k2.eps, ports: g.ports });
      }
    }
    while (rest.length) plan.create.push(newSlice(svc, addressType, g, rest.splice(0, max)));
  }
  return plan;
}

function placeholder(
  svc: Service, addressType: 'IPv4' | 'IPv6', mine: EndpointSlice[], plan: SlicePlan,
): SlicePlan {
  const keep = mine.find((s) => (s.endpoints ?? []).length === 0 && !s.ports?.length);
  for (const s of mine) if (s !== keep) plan.remove.push(s);
  if (!keep) plan.create.push(newSlice(svc, addressType, undefined, []));
  return plan;
}
