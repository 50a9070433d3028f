// certificates.k8s.io/v1 CertificateSigningRequest: its types, the well-known signer names and
// key usages, and the parse of `spec.request` (PEM PKCS#10) that validation, the approver and
// the signer share (upstream pkg/apis/certificates helpers.go ParseCSR + IsKubeletClientCSR).

// @peculiar/x509 needs the Reflect metadata polyfill before it loads.
import 'reflect-metadata';
import { createPublicKey, verify } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { KubeObject } from './object.js';

export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

export const ALL_USAGES = ['signing', 'digital signature', 'content commitment',
  'key encipherment', 'key agreement', 'data encipherment', 'cert sign', 'crl sign',
  'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing',
  'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'timestamping',
  'ocsp signing', 'microsoft sgc', 'netscape sgc'].sort();

export interface CsrCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export interface CertificateSigningRequest extends KubeObject {
  spec: {
    request: string; // base64 of the PEM
    signerName: string;
    expirationSeconds?: number;
    usages?: string[];
    username?: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  };
  status?: { conditions?: CsrCondition[]; certificate?: string };
}

/** What the approver and signer read of a PKCS#10 request. */
export interface ParsedCsr {
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly emails: readonly string[];
  readonly uris: readonly string[];
  /** DER SubjectPublicKeyInfo. */
  readonly publicKeyDer: Buffer;
  /** The request as @peculiar/x509 parsed it (for the signer). */
  readonly request: x509.Pkcs10CertificateRequest;
}

/** Parses and checks the signature of a PEM request (the text, not base64); throws an Error
 *  with upstream's words when it is not one. */
export function parseCsrPem(pem: string): ParsedCsr {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem);
  if (!m || m[1] !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let req: x509.Pkcs10CertificateRequest;
  try {
    req = new x509.Pkcs10CertificateRequest(pem.slice(m.index));
  } catch (e) {
    throw new Error(`asn1: structure error: ${(e as Error).message}`);
  }
  const publicKeyDer = Buffer.from(req.publicKey.rawData);
  const hash = (req.signatureAlgorithm as { hash?: { name?: string } }).hash?.name ?? 'SHA-256';
  let ok = false;
  try {
    // `tbs` (the signed CertificationRequestInfo) is private in the typings only.
    const tbs = (req as unknown as { tbs: ArrayBuffer }).tbs;
    ok = verify(hash.replace('-', '').toLowerCase(), Buffer.from(tbs),
      createPublicKey({ key: publicKeyDer, format: 'der', type: 'spki' }), Buffer.from(req.signature));
  } catch {
    ok = false;
  }
  if (!ok) throw new Error('x509: ECDSA verification failure');
  const name = new x509.Name(req.subject).toJSON();
  const values = (k: string) => name.flatMap((rdn) => rdn[k] ?? []);
  const ext = req.getExtension('2.5.29.17');
  const names = ext ? new x509.SubjectAlternativeNameExtension(ext.rawData).names.toJSON() : [];
  const of = (t: string) => names.filter((n) => n.type === t).map((n) => n.value);
  return { commonName: values('CN')[0] ?? '', organizations: values('O'), dnsNames: of('dns'),
    ipAddresses: of('ip'), emails: of('email'), uris: of('url'), publicKeyDer, request: req };
}

/** spec.request (base64 of PEM, as the API carries []byte) parsed. */
export function parseCsr(csr: CertificateSigningRequest): ParsedCsr {
  return parseCsrPem(Buffer.from(csr.spec.request ?? '', 'base64').toString('utf8'));
}

const KUBELET_CLIENT_USAGES = ['client auth', 'digital signature', 'key encipherment'];
const KUBELET_CLIENT_USAGES_NO_RSA = ['client auth', 'digital signature'];

const sameSet = (a: readonly string[], b: readonly string[]) => {
  const s = [...new Set(a)].sort();
  return s.length === b.length && s.every((x, i) => x === b[i]);
};

/** upstream ValidateKubeletClientCSR: the reason a request is no kubelet client certificate. */
export function kubeletClientProblem(p: ParsedCsr, usages: readonly string[]): string | undefined {
  if (p.organizations.length !== 1 || p.organizations[0] !== 'system:nodes') {
    return 'subject organization is not system:nodes';
  }
  if (p.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (p.emails.length > 0) return 'Email subjectAltNames are not allowed';
  if (p.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (p.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!p.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, KUBELET_CLIENT_USAGES) && !sameSet(usages, KUBELET_CLIENT_USAGES_NO_RSA)) {
    return `usages did not match [${KUBELET_CLIENT_USAGES.join(' ')}]`;
  }
  return undefined;
}

const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_USAGES_NO_RSA = ['digital signature', 'server auth'];

/** upstream ValidateKubeletServingCSR (signer kubernetes.io/kubelet-serving): the reason a
 *  request is no kubelet serving certificate. Usages are the exact set, `key encipherment`
 *  only for RSA keys may be left out. */
export function kubeletServingProblem(p: ParsedCsr, usages: readonly string[]): string | undefined {
  if (p.organizations.length !== 1 || p.organizations[0] !== 'system:nodes') {
    return 'subject organization is not system:nodes';
  }
  if (p.dnsNames.length === 0 && p.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (p.emails.length > 0) return 'Email subjectAltNames are not allowed';
  if (p.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_SERVING_USAGES) && !sameSet(usages, KUBELET_SERVING_USAGES_NO_RSA)) {
    return `usages did not match [${KUBELET_SERVING_USAGES.join(' ')}]`;
  }
  if (!p.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** The Approved / Denied / Failed state of a CSR (upstream GetCertApprovalCondition etc.). */
export function csrState(csr: CertificateSigningRequest): { approved: boolean; denied: boolean; failed: boolean } {
  const cs = csr.status?.conditions ?? [];
  const has = (t: string) => cs.some((c) => c.type === t && c.status === 'True');
  return { approved: has('Approved'), denied: has('Denied'), failed: has('Failed') };
}
