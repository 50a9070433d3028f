// The kubelet's serving certificate by CSR, as upstream's kubelet with `serverTLSBootstrap: true`
// (pkg/kubelet/certificate/kubelet.go NewKubeletServerCertificateManager): a fresh ECDSA key and
// a CSR for `system:node:<name>` in system:nodes, SANs the node's name (its Hostname address)
// and InternalIPs, usages digital signature + server auth (key encipherment is for RSA keys
// only), signer kubernetes.io/kubelet-serving, sent as the node itself (`system:node:<name>`,
// its kubelet.conf) under generateName `csr-`. It then waits, as long as it takes, for an
// approver (kdp's lab rule in controllers/certificates/approver.ts, or `kubectl certificate
// approve`) and csrsigning. For a node without the cluster CA key (`kdp node join`).

import { KUBELET_SERVING_SIGNER, type CertificateSigningRequest } from '../api/certificates.js';
import { createCsr } from '../apiserver/pki/sign-csr.js';
import type { Client, KubeObject } from '../client/types.js';
import { waitForCertificate } from './join.js';

const CSRS = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests' } as const;
export const KUBELET_SERVING_USAGES = ['digital signature', 'server auth'] as const;

export interface ServingRequest {
  /** The kubelet's client (system:node:<name>). */
  readonly client: Client;
  readonly nodeName: string;
  /** The node's InternalIPs (the SANs beside its name). */
  readonly nodeIPs: readonly string[];
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
}

/** Sends the CSR and resolves with the issued certificate and its key (PEM). */
export async function requestKubeletServing(r: ServingRequest): Promise<{ certPem: string; keyPem: string }> {
  const { csrPem, keyPem } = await createCsr({ commonName: `system:node:${r.nodeName}`, organizations: ['system:nodes'],
    dnsNames: [r.nodeName], ipAddresses: [...new Set(r.nodeIPs)] });
  const made = await r.client.create<CertificateSigningRequest>(CSRS, {
    apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { generateName: 'csr-' },
    spec: { request: Buffer.from(csrPem, 'utf8').toString('base64'), signerName: KUBELET_SERVING_SIGNER,
      usages: [...KUBELET_SERVING_USAGES] },
  } as KubeObject as CertificateSigningRequest);
  const name = made.metadata.name!;
  r.log?.(`kubelet serving certificate: certificate signing request ${name} sent (${KUBELET_SERVING_SIGNER})`);
  const certPem = await waitForCertificate(r.client, name, Infinity, r.signal);
  r.log?.(`kubelet serving certificate: ${name} issued, serving the kubelet API`);
  return { certPem, keyPem };
}
