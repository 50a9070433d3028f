// autoscaling/v1 Scale for deployments and replicasets (the `scale` subresource).

import type { KubeObject } from '../../client/types.js';
import { formatLabelSelector } from '../../api/selectors.js';
import type { LabelSelector } from '../../api/types.js';

/** The Scale's `status.selector`: the parent's selector in string form. */
export function selectorString(sel: LabelSelector | undefined): string {
  return sel ? formatLabelSelector(sel) : '';
}

export function toScale(o: KubeObject): KubeObject {
  const spec = (o.spec ?? {}) as { replicas?: number; selector?: LabelSelector };
  const status = (o.status ?? {}) as { replicas?: number };
  const m = o.metadata;
  return {
    kind: 'Scale', apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid,
      resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: spec.replicas ?? 0 },
    status: { replicas: status.replicas ?? 0, selector: selectorString(spec.selector) },
  };
}

/** Applies a Scale's spec.replicas to its parent; keeps the Scale's resourceVersion pin. */
export function fromScale(parent: KubeObject, scale: KubeObject): KubeObject {
  const replicas = (scale.spec as { replicas?: unknown } | undefined)?.replicas;
  const spec = { ...((parent.spec ?? {}) as Record<string, unknown>) };
  if (typeof replicas === 'number') spec.replicas = replicas;
  return { ...parent, spec, metadata: { ...parent.metadata,
    resourceVersion: scale.metadata?.resourceVersion } };
}
