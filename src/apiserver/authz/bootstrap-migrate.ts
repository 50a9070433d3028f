// Bootstrap RBAC objects an older kdp wrote that now grant more than upstream's policy, and
// how to correct them. ensureObjects never overwrites, so a data dir from before the Node
// authorizer keeps `system:node` bound to group `system:nodes`, which would let every node
// read every Secret through RBAC. Only objects still marked for auto-update are changed, as
// upstream's reconciler respects `rbac.authorization.kubernetes.io/autoupdate: "false"`.

import type { KubeObject } from '../../client/types.js';
import { isKdpError } from '../../errors.js';
import type { RequestContext } from '../rest/deps.js';
import type { ApiService } from '../service.js';
import type { Subject } from './rules.js';

export const SYSTEM_NODE_BINDING = 'system:node';
const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';

/** The `system:node` ClusterRoleBinding without its legacy `system:nodes` subject, or
 *  undefined when there is nothing to change. */
export function withoutLegacyNodeSubjects(binding: KubeObject): KubeObject | undefined {
  if (binding.metadata.annotations?.[AUTOUPDATE] === 'false') return undefined;
  const subjects = (binding.subjects ?? []) as Subject[];
  const keep = subjects.filter((s) => !(s.kind === 'Group' && s.name === 'system:nodes'));
  if (keep.length === subjects.length) return undefined;
  const out: KubeObject = { ...binding };
  if (keep.length > 0) out.subjects = keep;
  else delete out.subjects;
  return out;
}

const CRBS = { group: 'rbac.authorization.k8s.io', version: 'v1',
  resource: 'clusterrolebindings' } as const;

/** Applies withoutLegacyNodeSubjects to the stored `system:node` binding (start-up step). */
export async function dropLegacyNodeSubjects(svc: ApiService, ctx: RequestContext):
  Promise<boolean> {
  let current: KubeObject;
  try {
    current = await svc.get(ctx, { ...CRBS, name: SYSTEM_NODE_BINDING }) as KubeObject;
  } catch (e) {
    if (isKdpError(e, 'KDP_NOT_FOUND')) return false;
    throw e;
  }
  const next = withoutLegacyNodeSubjects(current);
  if (!next) return false;
  await svc.update(ctx, { ...CRBS, name: SYSTEM_NODE_BINDING }, next,
    { fieldManager: 'kdp-bootstrap' });
  return true;
}
