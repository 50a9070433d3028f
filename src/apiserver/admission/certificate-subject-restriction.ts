// CertificateSubjectRestriction, as upstream's plugin/pkg/admission/certificates/subjectrestriction
// (on by default): a CertificateSigningRequest for the kubernetes.io/kube-apiserver-client signer
// may not ask for the system:masters group, which no RBAC could ever take away again.

import { KUBE_APISERVER_CLIENT_SIGNER, parseCsr, type CertificateSigningRequest } from '../../api/certificates.js';
import type { AdmissionPlugin, AdmissionRequest } from '../pipeline-types.js';
import { forbidden } from './node-restriction.js';

export function buildCertificateSubjectRestrictionPlugin(): AdmissionPlugin {
  return {
    name: 'CertificateSubjectRestriction',
    async validate(req: AdmissionRequest) {
      if (req.operation !== 'CREATE' || req.group !== 'certificates.k8s.io' ||
        req.resource !== 'certificatesigningrequests' || req.subresource) return;
      const csr = req.object as CertificateSigningRequest | undefined;
      if (csr?.spec?.signerName !== KUBE_APISERVER_CLIENT_SIGNER) return;
      let orgs: readonly string[];
      try {
        orgs = parseCsr(csr).organizations;
      } catch (e) {
        throw forbidden(req, `failed to parse CSR: ${(e as Error).message}`);
      }
      if (orgs.includes('system:masters')) {
        throw forbidden(req, `use of ${KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed`);
      }
    },
  };
}
