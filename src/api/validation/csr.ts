// CertificateSigningRequest (certificates.k8s.io/v1) validation as upstream's
// pkg/apis/certificates/validation (v1.33, strict v1 options; the compatibility allowances apply
// only to stored objects that already break a rule): a request that parses and whose signature
// checks, usages given, known and unique, a `domain/path` signerName, expirationSeconds >= 600,
// well-formed conditions (Approved xor Denied; those and Failed only "True"), PEM certificates.
// Updates may not remove Approved/Denied/Failed conditions; only `approval` may add or change
// Approved/Denied, only `status` may set the certificate, and never change one already set.

import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../object.js';
import { X509Certificate } from 'node:crypto';
import {
  ALL_USAGES, LEGACY_UNKNOWN_SIGNER, parseCsr, type CertificateSigningRequest, type CsrCondition,
} from '../certificates.js';
import type { ObjectMeta } from '../types.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './common.js';
import { type Cause, duplicate, forbidden, invalid, notSupported, required } from './field-errors.js';
import { isDNS1123Subdomain } from './names.js';

const ALL_STATUS = ['False', 'True', 'Unknown'];
const TRUE_ONLY_TYPES = ['Approved', 'Denied', 'Failed'];
const anyName = () => [] as string[];

/** upstream ValidateSignerName. */
function signerNameCauses(v: string, path: string): Cause[] {
  if (!v) return [required(path)];
  const parts = v.split('/');
  if (parts.length !== 2) {
    return [invalid(path, v, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  }
  const out = isDNS1123Subdomain(parts[0]!).map((m) => invalid(path, parts[0], m));
  if (parts[1] === '') out.push(invalid(path, v, 'validating path: path segment must not be empty'));
  return out;
}

function certificateProblem(b64: string | undefined): string | undefined {
  if (!b64) return undefined;
  const text = Buffer.from(b64, 'base64').toString('utf8');
  const blocks = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g)];
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const b of blocks) {
    if (b[1] !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found "${b[1]}"`;
    if (b[2]!.includes(':')) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(b[0]);
    } catch (e) {
      return `x509: malformed certificate: ${(e as Error).message}`;
    }
  }
  return undefined;
}

function conditionCauses(conds: readonly CsrCondition[], old: CertificateSigningRequest | undefined): Cause[] {
  const path = 'status.conditions';
  const out: Cause[] = [];
  const oldTypes = (old?.status?.conditions ?? []).map((c) => c.type);
  const tolerateDup = oldTypes.length !== new Set(oldTypes).size;
  const tolerateBoth = oldTypes.includes('Approved') && oldTypes.includes('Denied');
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conds.forEach((c, i) => {
    const at = `${path}[${i}]`;
    if (!c.type && !oldTypes.includes('')) out.push(required(`${at}.type`));
    const allowed = TRUE_ONLY_TYPES.includes(c.type) ? ['True'] : ALL_STATUS;
    if (!c.status) out.push(required(`${at}.status`));
    else if (!allowed.includes(c.status)) out.push(notSupported(`${at}.status`, c.status, allowed));
    if (!tolerateBoth && ((c.type === 'Approved' && denied) || (c.type === 'Denied' && approved))) {
      out.push(invalid(path, c.type, 'Approved and Denied conditions are mutually exclusive'));
    }
    if (c.type === 'Approved') approved = true;
    if (c.type === 'Denied') denied = true;
    if (!tolerateDup && seen.has(c.type)) out.push(duplicate(`${at}.type`, c.type));
    seen.add(c.type);
  });
  return out;
}

function validateCsr(csr: CertificateSigningRequest, old?: CertificateSigningRequest): Cause[] {
  const out = validateObjectMeta(csr.metadata as ObjectMeta, { namespaced: false, nameFn: anyName });
  const spec = csr.spec ?? ({} as CertificateSigningRequest['spec']);
  try {
    parseCsr(csr);
  } catch (e) {
    out.push(invalid('spec.request', spec.request ?? '', (e as Error).message));
  }
  const usages = spec.usages ?? [];
  if (usages.length === 0) out.push(required('spec.usages'));
  const oldUsages = old?.spec?.usages ?? [];
  if (!oldUsages.some((u) => !ALL_USAGES.includes(u))) {
    usages.forEach((u, i) => {
      if (!ALL_USAGES.includes(u)) out.push(notSupported(`spec.usages[${i}]`, u, ALL_USAGES));
    });
  }
  if (oldUsages.length === new Set(oldUsages).size) {
    usages.forEach((u, i) => { if (usages.indexOf(u) !== i) out.push(duplicate(`spec.usages[${i}]`, u)); });
  }
  if (spec.signerName === LEGACY_UNKNOWN_SIGNER && old?.spec?.signerName !== LEGACY_UNKNOWN_SIGNER) {
    out.push(invalid('spec.signerName', spec.signerName, 'the legacy signerName is not allowed via this API version'));
  } else {
    out.push(...signerNameCauses(spec.signerName ?? '', 'spec.signerName'));
  }
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds < 600) {
    out.push(invalid('spec.expirationSeconds', spec.expirationSeconds,
      'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  out.push(...conditionCauses(csr.status?.conditions ?? [], old));
  const cert = csr.status?.certificate;
  const untouched = old !== undefined && (old.status?.certificate ?? '') === (cert ?? '');
  if (!untouched && !(old && certificateProblem(old.status?.certificate))) {
    const p = certificateProblem(cert);
    if (p) out.push(invalid('status.certificate', '<certificate data>', p));
  }
  return out;
}

export function validateCertificateSigningRequest(o: KubeObject): Cause[] {
  return validateCsr(o as CertificateSigningRequest);
}

/** Update of the object (`subresource` undefined), of `status`, or of `approval`. */
export function validateCertificateSigningRequestUpdate(o: KubeObject, oldObj: KubeObject,
  subresource?: string): Cause[] {
  const csr = o as CertificateSigningRequest;
  const old = oldObj as CertificateSigningRequest;
  const out = validateCsr(csr, old);
  const find = (c: CertificateSigningRequest, t: string) => (c.status?.conditions ?? []).filter((x) => x.type === t);
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (find(csr, t).length < find(old, t).length) {
      out.push(forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
    }
  }
  if (subresource !== 'approval') {
    for (const t of ['Approved', 'Denied']) {
      const [n, p] = [find(csr, t), find(old, t)];
      if (n.length > p.length) {
        out.push(forbidden('status.conditions', `updates may not add a condition of type "${t}"`));
      } else if (n.length === p.length && !isDeepStrictEqual(n, p)) {
        out.push(forbidden('status.conditions', `updates may not modify a condition of type "${t}"`));
      }
    }
  }
  const [now, before] = [csr.status?.certificate ?? '', old.status?.certificate ?? ''];
  if (now !== before) {
    if (subresource !== 'status') {
      out.push(forbidden('status.certificate', 'updates may not set certificate content'));
    } else if (before !== '') {
      out.push(forbidden('status.certificate', 'updates may not modify existing certificate content'));
    }
  }
  out.push(...validateObjectMetaUpdate(csr.metadata as ObjectMeta, old.metadata as ObjectMeta));
  return out;
}
