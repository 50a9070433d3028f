// csrapproving, as upstream's pkg/controller/certificates/approver/sarapprove.go: a pending CSR
// for a kubelet client certificate (signer kubernetes.io/kube-apiserver-client-kubelet, subject
// system:node:<name> in system:nodes, no SANs, client usages) is approved when a
// SubjectAccessReview for its requester allows `create certificatesigningrequests/selfnodeclient`
// (the node renewing its own certificate) or `.../nodeclient` (a new node bootstrapping; kubeadm
// binds that to its token group). Anything else is left for a person (`kubectl certificate`).
//
// kdp's lab choice beyond upstream (whose csrapproving never approves kubelet-serving; admins or
// kubelet-csr-approver do): a kubelet serving CSR (signer kubernetes.io/kubelet-serving, valid
// for that signer) is approved when its requester is `system:node:<name>` in system:nodes for
// the very node its subject names, and every DNS and IP SAN is one of that Node's
// status.addresses (Hostname, InternalIP, ...) and no other Node's — what kubelet-csr-approver
// checks (a node publishing another's address in its own status gets no certificate for it,
// which the API server would then accept at that address). Otherwise it
// stays Pending for `kubectl certificate approve`. A Node's change looks again at its pending
// serving CSRs (a kubelet may ask before its addresses are published).

import {
  KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, csrState, kubeletClientProblem, kubeletServingProblem, parseCsr,
  type CertificateSigningRequest, type ParsedCsr,
} from '../../api/certificates.js';
import type { Node } from '../../api/types.js';
import type { KubeObject } from '../../client/types.js';
import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
import { NODES } from '../refs.js';
import { buildCsrController, CSRS } from './refs.js';

const SARS = { group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' } as const;

const RECOGNIZERS = [
  { subresource: 'selfnodeclient', self: true,
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' },
  { subresource: 'nodeclient', self: false,
    message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
] as const;

const SERVING_MESSAGE = 'Auto approving kubelet serving certificate: requested by the node itself for its own addresses (kdp lab).';
const NODE_PREFIX = 'system:node:';

const addressesOf = (n: Node) => (n.status?.addresses ?? []).map((a) => a.address);

/** kdp's lab rule for kubelet-serving (module comment): the node asks for its own addresses,
 *  none of which another Node (`nodes`: all of them) has too. */
export function servingApprovable(csr: CertificateSigningRequest, req: ParsedCsr, node: Node | undefined,
  nodes: readonly Node[] = []): boolean {
  const name = req.commonName.slice(NODE_PREFIX.length);
  if (!req.commonName.startsWith(NODE_PREFIX) || csr.spec.username !== req.commonName) return false;
  if (!(csr.spec.groups ?? []).includes('system:nodes') || node?.metadata.name !== name) return false;
  const own = new Set(addressesOf(node));
  const others = new Set(nodes.filter((n) => n.metadata.name !== name).flatMap((n) => [n.metadata.name!, ...addressesOf(n)]));
  return [...req.dnsNames, ...req.ipAddresses].every((san) => own.has(san) && !others.has(san));
}

export function buildCsrApprover(ctx: ControllerContext): Controller {
  const { client } = ctx;
  const nodes = ctx.informers.informerFor<Node>(NODES);
  const csrs = ctx.informers.informerFor<CertificateSigningRequest>(CSRS);

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
    if (csr.spec.signerName === KUBELET_SERVING_SIGNER) {
      const req = parseCsr(csr);
      if (kubeletServingProblem(req, csr.spec.usages ?? [])) return;
      const node = nodes.cache.getByName(undefined, req.commonName.slice(NODE_PREFIX.length));
      if (servingApprovable(csr, req, node, nodes.cache.list())) await approve(csr, SERVING_MESSAGE);
      return;
    }
    if (csr.spec.signerName !== KUBELET_CLIENT_SIGNER) return;
    const req = parseCsr(csr);
    if (kubeletClientProblem(req, csr.spec.usages ?? [])) return;
    for (const r of RECOGNIZERS) {
      if (r.self && req.commonName !== csr.spec.username) continue;
      if (!await allowed(csr, r.subresource)) continue;
      await approve(csr, r.message);
      return;
    }
  }

  async function approve(csr: CertificateSigningRequest, message: string): Promise<void> {
    csr.status = { ...(csr.status ?? {}), conditions: [...(csr.status?.conditions ?? []),
      { type: 'Approved', status: 'True', reason: 'AutoApproved', message }] };
    await client.update(CSRS, csr, { subresource: 'approval' });
  }

  const c = buildCsrController(ctx, 'csrapproving', handle);
  const recheck = (node: Node) => {
    for (const csr of csrs.cache.list()) {
      if (csr.spec.signerName === KUBELET_SERVING_SIGNER && !csrState(csr).approved && !csrState(csr).denied
        && csr.spec.username === `${NODE_PREFIX}${node.metadata.name}`) c.queue.add(csr.metadata.name!);
    }
  };
  nodes.addEventHandler({ onAdd: recheck, onUpdate: (_, n) => recheck(n) });
  return { name: 'csrapproving', start: c.start, stop: c.stop };
}
