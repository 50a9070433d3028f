// csrapproving, as upstream's pkg/controller/certificates/approver/sarapprove.go: a pending CSR
// for a kubelet client certificate (signer kubernetes.io/kube-apiserver-client-kubelet, subject
// system:node:<name> in system:nodes, no SANs, client usages) is approved when a
// SubjectAccessReview for its requester allows `create certificatesigningrequests/selfnodeclient`
// (the node renewing its own certificate) or `.../nodeclient` (a new node bootstrapping; kubeadm
// binds that to its token group). Anything else is left for a person (`kubectl certificate`).

import {
  KUBELET_CLIENT_SIGNER, csrState, kubeletClientProblem, parseCsr, type CertificateSigningRequest,
} from '../../api/certificates.js';
import type { KubeObject } from '../../client/types.js';
import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
import { buildCsrController, CSRS } from './refs.js';

const SARS = { group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' } as const;

const RECOGNIZERS = [
  { subresource: 'selfnodeclient', self: true,
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' },
  { subresource: 'nodeclient', self: false,
    message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
] as const;

export function buildCsrApprover(ctx: ControllerContext): Controller {
  const { client } = ctx;

  async function allowed(csr: CertificateSigningRequest, subresource: string): Promise<boolean> {
    const s = csr.spec;
    const review = await client.create<KubeObject & { status?: { allowed?: boolean } }>(SARS, {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {},
      spec: { user: s.username, ...(s.uid ? { uid: s.uid } : {}), groups: s.groups ?? [],
        ...(s.extra ? { extra: s.extra } : {}),
        resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests',
          verb: 'create', subresource } },
    } as KubeObject);
    return review.status?.allowed === true;
  }

  async function handle(csr: CertificateSigningRequest): Promise<void> {
    if (csr.status?.certificate) return;
    const st = csrState(csr);
    if (st.approved || st.denied) return;
    if (csr.spec.signerName !== KUBELET_CLIENT_SIGNER) return;
    const req = parseCsr(csr);
    if (kubeletClientProblem(req, csr.spec.usages ?? [])) return;
    for (const r of RECOGNIZERS) {
      if (r.self && req.commonName !== csr.spec.username) continue;
      if (!await allowed(csr, r.subresource)) continue;
      csr.status = { ...(csr.status ?? {}), conditions: [...(csr.status?.conditions ?? []),
        { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message }] };
      await client.update(CSRS, csr, { subresource: 'approval' });
      return;
    }
  }

  const c = buildCsrController(ctx, 'csrapproving', handle);
  return { name: 'csrapproving', start: c.start, stop: c.stop };
}
