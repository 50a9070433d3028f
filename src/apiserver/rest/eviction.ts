// pods/eviction (policy/v1 Eviction): kdp serves no PodDisruptionBudget, so every eviction is
// allowed and is a delete of the pod with the Eviction's deleteOptions, answered with a
// Status of success as upstream's EvictionREST does (`kubectl drain` relies on it).

import type { DeleteOptions, KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import { successStatus } from '../status.js';
import { deleteObject } from './delete.js';
import type { RequestContext, ServiceDeps } from './deps.js';
import { badRequest } from './errors.js';
import { checkBodyAs } from './prepare.js';

interface EvictionBody {
  metadata?: { name?: string; namespace?: string };
  deleteOptions?: {
    gracePeriodSeconds?: number;
    preconditions?: DeleteOptions['preconditions'];
    propagationPolicy?: DeleteOptions['propagationPolicy'];
    orphanDependents?: boolean;
    dryRun?: string[];
  } | null;
}

const POLICIES = ['Orphan', 'Background', 'Foreground'];

/** The Eviction's deleteOptions as DeleteOptions; `dryRun` also comes from the URL. */
function deleteOptionsOf(b: EvictionBody, dryRun: boolean): DeleteOptions {
  const d = b.deleteOptions ?? {};
  if (d.propagationPolicy !== undefined && !POLICIES.includes(d.propagationPolicy)) {
    throw badRequest(`propagationPolicy: Unsupported value: "${String(d.propagationPolicy)}"`);
  }
  const grace = typeof d.gracePeriodSeconds === 'number' ? d.gracePeriodSeconds : undefined;
  return {
    gracePeriodSeconds: grace, preconditions: d.preconditions ?? undefined,
    propagationPolicy: d.propagationPolicy ?? (d.orphanDependents === true ? 'Orphan' : undefined),
    dryRun: dryRun || (Array.isArray(d.dryRun) && d.dryRun.includes('All')),
  };
}

/** Evicts (deletes) pod `name`; 404 for an unknown pod, 400 when the body names another. */
export async function evictPod(
  deps: ServiceDeps, ctx: RequestContext & { dryRun?: boolean }, pods: ServedResource,
  t: { namespace?: string; name?: string }, body: unknown,
): Promise<KubeObject> {
  const b = checkBodyAs('policy/v1', 'Eviction', body ?? {}) as EvictionBody;
  const name = t.name;
  if (!name) throw badRequest('eviction needs the name of a pod');
  if (b.metadata?.name && b.metadata.name !== name) {
    throw badRequest('name in URL does not match name in Eviction object');
  }
  if (b.metadata?.namespace && t.namespace && b.metadata.namespace !== t.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace ' +
      'sent on the request');
  }
  await deleteObject(deps, ctx, pods, t.namespace, name, deleteOptionsOf(b, !!ctx.dryRun));
  return { ...successStatus({}), code: 201 } as unknown as KubeObject;
}
