// Authorization of resource requests; denials carry upstream's 403 wording (authz's
// forbiddenError).

import { forbiddenError } from '../authz/index.js';
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
  const attrs = {
    user: ctx.user, verb, resourceRequest: true, apiGroup: r.group, resource: r.resource,
    subresource, namespace: r.namespaced ? namespace : undefined, name,
  };
  const d = await deps.authorizer.authorize(attrs);
  if (!d.allowed) throw forbiddenError(attrs, d);
}
