// Requests answered without a stored object of their own: pods/binding (sets spec.nodeName
// once) and SelfSubjectAccessReview / SubjectAccessReview (asks the authorizer).

import type { KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import { groupVersion } from '../resource-types.js';
import { successStatus } from '../status.js';
import type { RequestContext, ServiceDeps } from './deps.js';
import { badRequest, conflict } from './errors.js';
import { evaluateAccessReview, userFromSpec } from '../authz/index.js';
import type { AccessReviewSpec } from '../authz/index.js';
import { checkBodyAs, timestamp } from './prepare.js';
import type { WriteCtx } from './write.js';
import { guaranteedUpdate } from './write.js';

interface Target { namespace?: string; name?: string }

export async function bindPod(
  deps: ServiceDeps, ctx: WriteCtx, pods: ServedResource, t: Target, body: unknown,
): Promise<KubeObject> {
  type BindingBody = { metadata?: { name?: string }; target?: { kind?: string; name?: string } };
  const b = checkBodyAs('v1', 'Binding', body ?? {}) as BindingBody;
  const name = t.name ?? b.metadata?.name;
  const node = b.target?.name;
  if (!name || !node) throw badRequest('binding needs metadata.name and target.name');
  if (b.target?.kind && b.target.kind !== 'Node') {
    throw badRequest(`target kind must be Node, not ${b.target.kind}`);
  }
  const bctx = { ...ctx, subresource: 'binding' };
  await guaranteedUpdate(deps, bctx, pods, t.namespace, name, (pod) => {
    const spec = (pod.spec ?? {}) as Record<string, unknown>;
    if (pod.metadata.deletionTimestamp) {
      throw conflict(pods, name, `pod ${name} is being deleted, cannot be assigned to a host`);
    }
    if (spec.nodeName) {
      throw conflict(pods, name,
        `pod ${name} is already assigned to node "${String(spec.nodeName)}"`);
    }
    spec.nodeName = node;
    pod.spec = spec;
    const status = (pod.status ?? {}) as { conditions?: Array<Record<string, unknown>> };
    const conds = (status.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
    conds.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null,
      lastTransitionTime: timestamp(deps.now()) });
    pod.status = { ...status, conditions: conds };
    delete pod.metadata.resourceVersion;
    return pod;
  });
  return { ...successStatus({}), code: 201 } as unknown as KubeObject;
}

/** SelfSubjectAccessReview asks about the requester, SubjectAccessReview about spec.user. */
export async function reviewAccess(
  deps: ServiceDeps, ctx: RequestContext, r: ServedResource, body: unknown,
): Promise<KubeObject> {
  const review = (body ?? {}) as { metadata?: Record<string, unknown>; spec?: AccessReviewSpec };
  const spec = review.spec ?? {};
  const user = r.resource === 'subjectaccessreviews' ? userFromSpec(spec) : ctx.user;
  const status = await evaluateAccessReview(deps.authorizer, user, spec, r.kind);
  return { kind: r.kind, apiVersion: groupVersion(r), metadata: { ...(review.metadata ?? {}) },
    spec, status };
}
