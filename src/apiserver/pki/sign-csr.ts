// Signing an approved CertificateSigningRequest with the cluster CA, as kube-controller-manager's
// csrsigning (pkg/controller/certificates/authority): the request's subject, SANs and public key;
// key usages and extended key usages from spec.usages; backdated 5 minutes; valid for the
// requested duration (spec.expirationSeconds, at least 10 minutes) capped at the signing
// duration (--cluster-signing-duration, default one year) and at the CA's own expiry. As
// upstream's authority boundaries(): a certificate of 8 hours or more ends 5 minutes early (its
// backdate taken off), a shorter one ends at now + duration; an expired CA signs nothing.

import 'reflect-metadata';
import type { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { ParsedCsr } from '../../api/certificates.js';
import { importKey, serialHex, SIGN_ALG, x509Crypto, type CertPair } from './issue.js';

const KU = x509.KeyUsageFlags;
const KEY_USAGES: Record<string, number> = {
  signing: KU.digitalSignature, 'digital signature': KU.digitalSignature,
  'content commitment': KU.nonRepudiation, 'key encipherment': KU.keyEncipherment,
  'key agreement': KU.keyAgreement, 'data encipherment': KU.dataEncipherment,
  'cert sign': KU.keyCertSign, 'crl sign': KU.cRLSign, 'encipher only': KU.encipherOnly,
  'decipher only': KU.decipherOnly,
};
const EXT_USAGES: Record<string, string> = {
  any: '2.5.29.37.0', 'server auth': '1.3.6.1.5.5.7.3.1', 'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3', 'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4', 'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6', 'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8', 'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3', 'netscape sgc': '2.16.840.1.113730.4.1',
};
const BACKDATE_MS = 5 * 60_000;
const MIN_DURATION_MS = 10 * 60_000;
/** upstream's Short: below it a certificate's end is not backdated (5 min is ~1% of 8 h). */
const SHORT_MS = 8 * 3_600_000;
export const DEFAULT_SIGNING_DURATION_MS = 365 * 86_400_000;

export interface SignOptions {
  readonly usages: readonly string[];
  readonly expirationSeconds?: number;
  /** --cluster-signing-duration (ms). */
  readonly maxDurationMs?: number;
  readonly now?: number;
}

/** The PEM certificate for `csr`, signed by `ca`. */
export async function signCsr(ca: CertPair, csr: ParsedCsr, o: SignOptions): Promise<string> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const now = o.now ?? Date.now();
  const max = o.maxDurationMs ?? DEFAULT_SIGNING_DURATION_MS;
  const asked = o.expirationSeconds !== undefined ? Math.max(o.expirationSeconds * 1000, MIN_DURATION_MS) : max;
  const ttl = Math.min(asked, max);
  const caEnd = caCert.notAfter.getTime();
  if (!(now < caEnd)) {
    throw new Error(`refusing to sign a certificate that expired in the past: NotAfter=${caCert.notAfter.toISOString()}`);
  }
  const notAfter = Math.min(now + (ttl < SHORT_MS ? ttl : ttl - BACKDATE_MS), caEnd);
  let ku = 0;
  const eku: string[] = [];
  for (const u of o.usages) {
    if (KEY_USAGES[u] !== undefined) ku |= KEY_USAGES[u]!;
    else if (EXT_USAGES[u] && !eku.includes(EXT_USAGES[u]!)) eku.push(EXT_USAGES[u]!);
  }
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey, false, x509Crypto),
  ];
  if (ku !== 0) extensions.push(new x509.KeyUsagesExtension(ku, true));
  if (eku.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(eku, false));
  const sans: x509.JsonGeneralName[] = [
    ...csr.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...csr.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...csr.emails.map((value) => ({ type: 'email' as const, value })),
    ...csr.uris.map((value) => ({ type: 'url' as const, value })),
  ];
  if (sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sans, false));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialHex(),
    subject: csr.request.subjectName,
    issuer: caCert.subjectName,
    publicKey: csr.request.publicKey,
    signingKey: await importKey(ca.keyPem),
    signingAlgorithm: SIGN_ALG,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(notAfter),
    extensions,
  }, x509Crypto);
  return cert.toString('pem');
}

/** A fresh ECDSA P-256 key and a PKCS#10 request for `subject` (the kubelet's TLS bootstrap;
 *  its serving certificate adds DNS and IP SANs). */
export async function createCsr(subject: { commonName: string; organizations: readonly string[];
  dnsNames?: readonly string[]; ipAddresses?: readonly string[] }): Promise<{ csrPem: string; keyPem: string }> {
  const keys = await x509Crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true,
    ['sign', 'verify']) as webcrypto.CryptoKeyPair;
  const name: x509.JsonName = [{ CN: [subject.commonName] }, ...subject.organizations.map((o) => ({ O: [o] }))];
  const sans: x509.JsonGeneralName[] = [
    ...(subject.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(subject.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name, keys, signingAlgorithm: SIGN_ALG,
    ...(sans.length ? { extensions: [new x509.SubjectAlternativeNameExtension(sans, false)] } : {}) }, x509Crypto);
  const der = await x509Crypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { csrPem: csr.toString('pem'), keyPem: x509.PemConverter.encode(der, 'PRIVATE KEY') };
}
