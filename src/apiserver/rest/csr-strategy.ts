// The CertificateSigningRequest storage strategies (upstream pkg/registry/certificates/
// certificates/strategy.go): a create records who asked (spec.username/uid/groups/extra from the
// authenticated user, never from the body) and starts without status; an update of the object
// changes only metadata; `status` changes only status; `approval` changes only the conditions.
// Condition timestamps the writer left out are filled (populateConditionTimestamps).

import type { KubeObject } from '../../client/types.js';
import type { CertificateSigningRequest, CsrCondition } from '../../api/certificates.js';
import type { UserInfo } from '../pipeline-types.js';
import type { ServedResource } from '../resource-types.js';
import { timestamp } from './prepare.js';

export function isCsrResource(r: ServedResource): boolean {
  return r.group === 'certificates.k8s.io' && r.resource === 'certificatesigningrequests';
}

export function csrPrepareForCreate(obj: KubeObject, user: UserInfo): void {
  const csr = obj as CertificateSigningRequest;
  const spec = { ...(csr.spec ?? {}) } as CertificateSigningRequest['spec'];
  delete spec.username; delete spec.uid; delete spec.groups; delete spec.extra;
  spec.username = user.name;
  if (user.uid) spec.uid = user.uid;
  if (user.groups.length > 0) spec.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length > 0) {
    spec.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  }
  csr.spec = spec;
  delete csr.status;
}

function withTimestamps(conds: CsrCondition[] | undefined, old: CsrCondition[], now: Date): CsrCondition[] | undefined {
  if (!conds) return conds;
  const stamp = timestamp(now);
  return conds.map((c) => {
    const out = { ...c };
    if (!out.lastUpdateTime) out.lastUpdateTime = stamp;
    if (!out.lastTransitionTime) {
      const prev = old.find((o) => o.type === c.type);
      out.lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime
        ? prev.lastTransitionTime : stamp;
    }
    return out;
  });
}

/** `next` as the strategy for `subresource` makes it, from the stored `old`. */
export function csrPrepareForUpdate(next: KubeObject, old: KubeObject, subresource: string | undefined,
  now: Date): KubeObject {
  const n = next as CertificateSigningRequest;
  const o = old as CertificateSigningRequest;
  const oldConds = o.status?.conditions ?? [];
  if (subresource === 'approval') {
    const status = { ...(o.status ?? {}) };
    const conds = withTimestamps(n.status?.conditions, oldConds, now);
    if (conds) status.conditions = conds; else delete status.conditions;
    const out = { ...o, metadata: { ...o.metadata }, status } as KubeObject;
    if (Object.keys(status).length === 0) delete out.status;
    return out;
  }
  if (subresource === 'status') {
    const status = n.status ? { ...n.status } : undefined;
    if (status?.conditions) status.conditions = withTimestamps(status.conditions, oldConds, now);
    const out = { ...o, metadata: { ...o.metadata }, ...(status ? { status } : {}) } as KubeObject;
    if (!status) delete out.status;
    return out;
  }
  const out = { ...n, spec: o.spec } as KubeObject;
  if (o.status === undefined) delete out.status; else out.status = o.status;
  return out;
}
