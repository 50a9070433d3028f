// pods/eviction (policy/v1 Eviction), as upstream's EvictionREST: a delete of the pod with the
// Eviction's deleteOptions, answered with a Status of success, unless a PodDisruptionBudget
// forbids it. A pod that is Succeeded, Failed, Pending or already being deleted is evicted
// without a budget; more than one budget selecting the pod is a 500; a budget not yet processed
// (observedGeneration behind) or with no disruptions allowed is 429 TooManyRequests with a
// DisruptionBudget cause (`kubectl drain` waits and retries); otherwise the budget's
// disruptionsAllowed is decremented and the pod recorded in disruptedPods (a conflict retried)
// before the delete. A not-ready pod may go without spending the budget while it is met
// (unhealthyPodEvictionPolicy IfHealthyBudget, the default) or always (AlwaysAllow).

import type { Pod } from '../../api/types.js';
import { matchesPod, type PodDisruptionBudget } from '../../api/pdb.js';
import type { DeleteOptions, KubeObject } from '../../client/types.js';
import { isPodReady } from '../../controllers/util.js';
import { kdpError } from '../../errors.js';
import type { ServedResource } from '../resource-types.js';
import { successStatus } from '../status.js';
import { deleteObject } from './delete.js';
import type { RequestContext, ServiceDeps } from './deps.js';
import { badRequest } from './errors.js';
import { listObjects, readObject } from './read.js';
import { guaranteedUpdate } from './write.js';
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
  const opts = deleteOptionsOf(b, !!ctx.dryRun);
  await checkBudget(deps, ctx, pods, t.namespace, name, !!opts.dryRun);
  await deleteObject(deps, ctx, pods, t.namespace, name, opts);
  return { ...successStatus({}), code: 201 } as unknown as KubeObject;
}

const TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget.";

function tooManyRequests(cause: string) {
  return kdpError('KDP_TOO_MANY_REQUESTS', TOO_MANY,
    { causes: [{ reason: 'DisruptionBudget', message: cause, field: '' }] });
}

async function checkBudget(
  deps: ServiceDeps, ctx: RequestContext, pods: ServedResource, namespace: string | undefined, name: string,
  dryRun: boolean,
): Promise<void> {
  const pod = (await readObject(deps, pods, namespace, name)).obj as Pod;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata.deletionTimestamp) return;
  const r = deps.catalog.find('policy', 'v1', 'poddisruptionbudgets');
  if (!r) return;
  const budgets = ((await listObjects(deps, r, namespace, {})).items as PodDisruptionBudget[])
    .filter((p) => matchesPod(p, pod));
  if (!budgets.length) return;
  if (budgets.length > 1) {
    throw kdpError('KDP_INTERNAL', 'This pod has more than one PodDisruptionBudget, which the eviction ' +
      'subresource does not support.');
  }
  const pdb = budgets[0]!;
  if (!isPodReady(pod)) {
    const policy = pdb.spec?.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget';
    const st = pdb.status ?? {};
    if (policy === 'AlwaysAllow') return;
    if ((st.currentHealthy ?? 0) >= (st.desiredHealthy ?? 0) && (st.desiredHealthy ?? 0) > 0) return;
  }
  await guaranteedUpdate(deps, { ...ctx, subresource: 'status', dryRun }, r, namespace, pdb.metadata.name!,
    (current) => {
      const b = current as PodDisruptionBudget;
      const st = b.status ?? {};
      if ((st.observedGeneration ?? 0) < (b.metadata.generation ?? 1)) {
        throw tooManyRequests(`The disruption budget ${b.metadata.name} is still being processed by the server.`);
      }
      const allowed = st.disruptionsAllowed ?? 0;
      if (allowed < 0) throw kdpError('KDP_FORBIDDEN', 'pdb disruptions allowed is negative');
      if (allowed === 0) {
        throw tooManyRequests(`The disruption budget ${b.metadata.name} needs ${st.desiredHealthy ?? 0} ` +
          `healthy pods and has ${st.currentHealthy ?? 0} currently`);
      }
      const now = deps.now().toISOString().replace(/\.\d+Z$/, 'Z');
      const conditions = allowed - 1 === 0
        ? (st.conditions ?? []).map((c) => (c.type === 'DisruptionAllowed' && c.status !== 'False'
          ? { ...c, status: 'False', reason: 'InsufficientPods', lastTransitionTime: now } : c))
        : st.conditions;
      return { ...b, metadata: { ...b.metadata, resourceVersion: undefined },
        status: { ...st, disruptionsAllowed: allowed - 1, disruptedPods: { ...(st.disruptedPods ?? {}), [name]: now },
          ...(conditions ? { conditions } : {}) } } as KubeObject;
    });
}
