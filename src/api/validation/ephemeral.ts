// Upstream ValidatePodEphemeralContainersUpdate (pkg/apis/core/validation, v1.33): a write to
// `pods/{name}/ephemeralcontainers` may only add ephemeral containers. Existing ones stay as
// they are; a new one needs a unique name and an image, names a target container that exists,
// and may not set what an ephemeral container cannot have (ports, probes, lifecycle,
// resources, a restart policy) — set meaning not Go's zero value, as upstream checks by reflection.

import type { Container, Pod } from '../types.js';
import {
  type Cause, duplicate, forbidden, notFound, required, invalidEach,
} from './field-errors.js';
import { child, deepEqual, index, validateObjectMetaUpdate } from './common.js';
import { isDNS1123Label } from './names.js';

type Ephemeral = Container & { targetContainerName?: string; restartPolicy?: string };

const NOT_ALLOWED: ReadonlyArray<keyof Ephemeral> = [
  'lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe', 'ports', 'resources',
  'restartPolicy',
] as ReadonlyArray<keyof Ephemeral>;

/** Go's zero value as the decoder leaves it: unset, null, or an empty object or list. */
function zero(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.values(v).every(zero);
}

export function validatePodEphemeralContainersUpdate(pod: Pod, old: Pod): Cause[] {
  const out = validateObjectMetaUpdate(pod.metadata, old.metadata);
  const path = 'spec.ephemeralContainers';
  const now = (pod.spec?.ephemeralContainers ?? []) as Ephemeral[];
  const before = (old.spec?.ephemeralContainers ?? []) as Ephemeral[];
  const byName = new Map(now.map((c) => [c.name, c]));
  for (const o of before) {
    const c = byName.get(o.name);
    if (!c || !deepEqual(c, o)) {
      out.push(forbidden(path, `existing ephemeral containers "${o.name}" may not be changed`));
    }
  }
  const others = new Set([...(old.spec?.containers ?? []), ...(old.spec?.initContainers ?? [])]
    .map((c) => c.name));
  const seen = new Set<string>();
  now.forEach((c, i) => {
    const p = index(path, i);
    if (!c.name) out.push(required(child(p, 'name'), ''));
    else {
      out.push(...invalidEach(child(p, 'name'), c.name, isDNS1123Label(c.name)));
      if (others.has(c.name) || seen.has(c.name)) out.push(duplicate(child(p, 'name'), c.name));
      seen.add(c.name);
    }
    if (!c.image) out.push(required(child(p, 'image'), ''));
    for (const f of NOT_ALLOWED) {
      if (!zero(c[f])) {
        out.push(forbidden(child(p, f), 'cannot be set for an Ephemeral Container'));
      }
    }
    const target = c.targetContainerName;
    if (target && !others.has(target)) {
      out.push(notFound(child(p, 'targetContainerName'), target));
    }
  });
  return out;
}
