// Authorization of resource requests; denials carry upstream's 403 wording (authz's
// forbiddenError). A list or watch carries its field selector as upstream's requestinfo does:
// parsed requirements for authorizers that allow only scoped reads (the Node authorizer's
// `spec.nodeName=<node>`), and `metadata.name=<x>` as the request's name.

import type { FieldRequirement } from '../../api/field-selectors.js';
import { parseFieldSelector } from '../../api/field-selectors.js';
import { forbiddenError } from '../authz/index.js';
import type { ServedResource } from '../resource-types.js';
import type { RequestContext, ServiceDeps } from './deps.js';

export interface Target {
  readonly verb: string;
  readonly r: ServedResource;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  /** list/watch: the `fieldSelector` query parameter. */
  readonly fieldSelector?: string;
}

/** The selector's requirements, or none when it does not parse (the read itself then fails
 *  with 400, as upstream, whose authorizers see no requirements either). */
function requirements(r: ServedResource, selector: string | undefined): FieldRequirement[] {
  if (!selector?.trim()) return [];
  try {
    return [...parseFieldSelector(selector, r.resource).requirements];
  } catch {
    return [];
  }
}

/** requestinfo: the name a list/watch's `metadata.name=` names, if a valid path segment. */
function selectedName(reqs: readonly FieldRequirement[]): string | undefined {
  const n = reqs.find((q) => q.field === 'metadata.name' && q.operator === '=')?.value;
  if (!n || n === '.' || n === '..' || n.includes('/') || n.includes('%')) return undefined;
  return n;
}

export async function authorize(deps: ServiceDeps, ctx: RequestContext, t: Target): Promise<void> {
  const { verb, r, namespace, subresource } = t;
  const reqs = requirements(r, t.fieldSelector);
  const name = t.name ?? (verb === 'list' || verb === 'watch' ? selectedName(reqs) : undefined);
  const attrs = {
    user: ctx.user, verb, resourceRequest: true, apiGroup: r.group, resource: r.resource,
    subresource, namespace: r.namespaced ? namespace : undefined, name,
    ...(reqs.length > 0 ? { fieldSelector: reqs } : {}),
  };
  const d = await deps.authorizer.authorize(attrs);
  if (!d.allowed) throw forbiddenError(attrs, d);
}
