// csrsigning, as upstream's pkg/controller/certificates/signer: an approved (not denied, not
// failed) CSR without a certificate, for one of the signers kube-controller-manager runs with
// the cluster CA (kube-apiserver-client, kube-apiserver-client-kubelet, kubelet-serving), is
// checked against its signer's rules and signed; one that breaks them gets a Failed condition
// (reason SignerValidationFailure) instead. legacy-unknown and other signers are not ours.

import {
  KUBE_APISERVER_CLIENT_SIGNER, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, csrState,
  kubeletClientProblem, kubeletServingProblem, parseCsr, type CertificateSigningRequest, type ParsedCsr,
} from '../../api/certificates.js';
import { signCsr } from '../../apiserver/pki/sign-csr.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
import { buildCsrController, CSRS } from './refs.js';

const CLIENT_USAGES = ['client auth', 'digital signature', 'key encipherment'];

/** upstream isKubeletServing / isKubeletClient / isKubeAPIServerClient: why the request is not
 *  for the signer. kube-apiserver-client (validAPIServerClientUsages): digital signature and
 *  key encipherment optional, `client auth` required — a certificate without it would carry no
 *  extended key usage, which Go's verifier takes as any usage. */
export function signerProblem(signer: string, p: ParsedCsr, usages: readonly string[]): string | undefined {
  switch (signer) {
    case KUBELET_CLIENT_SIGNER: return kubeletClientProblem(p, usages);
    case KUBE_APISERVER_CLIENT_SIGNER: {
      const bad = usages.find((u) => !CLIENT_USAGES.includes(u));
      if (bad) return `invalid usage for client certificate: ${bad}`;
      return usages.includes('client auth') ? undefined : 'missing required usage for client certificate: client auth';
    }
    default: return kubeletServingProblem(p, usages);
  }
}

const SIGNERS = [KUBE_APISERVER_CLIENT_SIGNER, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER];

export function buildCsrSigner(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const ca = options.clusterSigning;
  // As kube-controller-manager without --cluster-signing-{cert,key}-file: nothing to sign with.
  if (!ca) return { name: 'csrsigning', start() {}, stop() {} };

  async function handle(csr: CertificateSigningRequest): Promise<void> {
    const st = csrState(csr);
    if (!st.approved || st.denied || st.failed || csr.status?.certificate) return;
    if (!SIGNERS.includes(csr.spec.signerName)) return;
    const req = parseCsr(csr);
    const usages = csr.spec.usages ?? [];
    const problem = signerProblem(csr.spec.signerName, req, usages);
    const status = { ...(csr.status ?? {}) };
    if (problem) {
      status.conditions = [...(status.conditions ?? []), { type: 'Failed', status: 'True',
        reason: 'SignerValidationFailure', message: problem }];
    } else {
      const pem = await signCsr(ca!, req, { usages, expirationSeconds: csr.spec.expirationSeconds,
        maxDurationMs: options.clusterSigningDurationMs, now: options.now() });
      status.certificate = Buffer.from(pem, 'utf8').toString('base64');
    }
    try {
      await client.update(CSRS, { ...csr, status }, { subresource: 'status' });
    } catch (e) {
      if (isKdpError(e, 'KDP_CONFLICT') || isKdpError(e, 'KDP_NOT_FOUND')) return;
      throw e;
    }
  }

  const c = buildCsrController(ctx, 'csrsigning', handle);
  return { name: 'csrsigning', start: c.start, stop: c.stop };
}
