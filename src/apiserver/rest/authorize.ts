// Authorization of resource requests, with upstream's 403 message.

import { kdpError } from '../../errors.js';
import type { ServedResource } from '../resource-types.js';
import type { RequestContext, ServiceDeps } from './deps.js';

export interface Target {
  readonly verb: string;
  readonly r: ServedResource;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
}

export async function authorize(deps: ServiceDeps, ctx: RequestContext, t: Target): Promise<void> {
  const { verb, r, namespace, name, subresource } = t;
  const d = await deps.authorizer.authorize({
    user: ctx.user, verb, resourceRequest: true, apiGroup: r.group, resource: r.resource,
    subresource, namespace: r.namespaced ? namespace : undefined, name,
  });
  if (d.allowed) return;
  const res = subresource ? `${r.resource}/${subresource}` : r.resource;
  const subject = name ? `${r.resource}${r.group ? '.' + r.group : ''} "${name}"` :
    `${r.resource}${r.group ? '.' + r.group : ''}`;
  const scope = r.namespaced && namespace ? `in the namespace "${namespace}"` :
    'at the cluster scope';
  let msg = `${subject} is forbidden: User "${ctx.user.name}" cannot ${verb} resource "${res}" ` +
    `in API group "${r.group}" ${scope}`;
  if (d.reason) msg += `: ${d.reason}`;
  throw kdpError('KDP_FORBIDDEN', msg, { name: name ?? '', group: r.group, kind: r.resource });
}
