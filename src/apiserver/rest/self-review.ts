// Reviews about the requester, answered without storing anything:
// - authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`): the user the request
//   authenticated (and impersonated) as, as upstream's selfsubjectreview REST;
// - authorization.k8s.io/v1 SelfSubjectRulesReview (`kubectl auth can-i --list`): the rules the
//   authorizers grant the requester in spec.namespace, as upstream's selfsubjectrulesreview REST
//   (rules the authorizers cannot enumerate make the answer `incomplete`).

import type { KubeObject } from '../../client/types.js';
import type { UserRules } from '../pipeline-types.js';
import type { ServedResource } from '../resource-types.js';
import { groupVersion } from '../resource-types.js';
import type { RequestContext, ServiceDeps } from './deps.js';
import { badRequest } from './errors.js';
import { timestamp } from './prepare.js';

export function isSelfReview(r: ServedResource): boolean {
  return (r.group === 'authentication.k8s.io' && r.resource === 'selfsubjectreviews') ||
    (r.group === 'authorization.k8s.io' && r.resource === 'selfsubjectrulesreviews');
}

function objectBody(body: unknown, kind: string): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('the body of the request must be a JSON or YAML object');
  }
  const b = body as { kind?: unknown };
  if (b.kind !== undefined && b.kind !== '' && b.kind !== kind) {
    throw badRequest(`not a ${kind}: kind ${JSON.stringify(b.kind)}`);
  }
  return body as Record<string, unknown>;
}

export async function selfReview(
  deps: ServiceDeps, ctx: RequestContext, r: ServedResource, body: unknown,
): Promise<KubeObject> {
  const b = objectBody(body, r.kind);
  const head = { kind: r.kind, apiVersion: groupVersion(r) };
  if (r.resource === 'selfsubjectreviews') {
    const u = ctx.user;
    return { ...head, metadata: { creationTimestamp: timestamp(deps.now()) },
      status: { userInfo: {
        username: u.name, ...(u.uid ? { uid: u.uid } : {}),
        ...(u.groups.length > 0 ? { groups: [...u.groups] } : {}),
        ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: { ...u.extra } } : {}),
      } } } as KubeObject;
  }
  const spec = (b.spec ?? {}) as { namespace?: unknown };
  if (typeof spec !== 'object' || (spec.namespace !== undefined &&
    typeof spec.namespace !== 'string')) {
    throw badRequest('SelfSubjectRulesReview in version "v1" cannot be handled as a ' +
      'SelfSubjectRulesReview: spec.namespace must be a string');
  }
  const namespace = (spec.namespace as string | undefined) ?? '';
  if (namespace === '') throw badRequest('no namespace on request');
  const rules: UserRules = deps.authorizer.rulesFor ?
    await deps.authorizer.rulesFor(ctx.user, namespace) :
    { resourceRules: [], nonResourceRules: [], incomplete: true };
  return { ...head, metadata: { creationTimestamp: null }, spec: {},
    status: { resourceRules: rules.resourceRules, nonResourceRules: rules.nonResourceRules,
      incomplete: rules.incomplete,
      ...(rules.evaluationError ? { evaluationError: rules.evaluationError } : {}) },
  } as unknown as KubeObject;
}
