// Certificate issuance with @peculiar/x509 over Node's WebCrypto (ECDSA P-256, SHA-256).
// Certificates are shaped for Go's crypto/x509 (kubectl): positive serials, SANs on server
// certificates, basicConstraints CA:TRUE on the CA, serverAuth/clientAuth EKUs on leaves.

// @peculiar/x509 resolves its algorithm registry through tsyringe, which needs the Reflect
// metadata polyfill loaded first.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type X509Crypto = Parameters<typeof x509.X509CertificateGenerator.create>[1];
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

export const x509Crypto = webcrypto as unknown as NonNullable<X509Crypto>;
const subtle = webcrypto.subtle;
const KEY_ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
export const SIGN_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

/** A certificate and its private key, both PEM (key in PKCS#8). */
export interface CertPair {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface LeafSpec {
  readonly commonName: string;
  readonly organizations?: readonly string[];
  /** `peer`: both (etcd members talk to each other as server and client). */
  readonly usage: 'server' | 'client' | 'peer';
  /** `IP:1.2.3.4` / `DNS:name`, or a bare IP or name (kind guessed). Server certificates only. */
  readonly sans?: readonly string[];
  readonly days?: number;
}

export function serialHex(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01; // positive and without a leading zero byte
  return b.toString('hex');
}

function validity(days: number): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - 5 * 60_000), notAfter: new Date(now + days * DAY_MS) };
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await subtle.generateKey(KEY_ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

export async function importKey(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decodeFirst(pem);
  return subtle.importKey('pkcs8', der, KEY_ALG, false, ['sign']);
}

/** Parses `IP:x`, `DNS:x` or a bare value into a GeneralName. */
export function parseSan(s: string): x509.JsonGeneralName {
  const m = /^(IP|DNS):(.+)$/i.exec(s);
  const value = m ? m[2]! : s;
  const isIp = m ? m[1]!.toUpperCase() === 'IP' : /^[\d.]+$|:/.test(s);
  return { type: isIp ? 'ip' : 'dns', value };
}

export async function issueCa(commonName: string, days = 3650): Promise<CertPair> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serialHex(),
      name: [{ CN: [commonName] }],
      keys,
      signingAlgorithm: SIGN_ALG,
      ...validity(days),
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign |
            x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, x509Crypto),
      ],
    },
    x509Crypto,
  );
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}

/** Issues a leaf certificate signed by `ca`. */
export async function issueLeaf(ca: CertPair, spec: LeafSpec): Promise<CertPair> {
  const keys = await newKeys();
  const caCert = new x509.X509Certificate(ca.certPem);
  const subject: x509.JsonName = [{ CN: [spec.commonName] }];
  for (const o of spec.organizations ?? []) subject.push({ O: [o] });
  const eku = spec.usage === 'server' ? [x509.ExtendedKeyUsage.serverAuth]
    : spec.usage === 'client' ? [x509.ExtendedKeyUsage.clientAuth]
      : [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    new x509.ExtendedKeyUsageExtension(eku, false),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey, false, x509Crypto),
  ];
  if (spec.sans && spec.sans.length > 0) {
    extensions.push(new x509.SubjectAlternativeNameExtension(spec.sans.map(parseSan), false));
  }
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialHex(),
      subject,
      issuer: caCert.subject,
      publicKey: keys.publicKey,
      signingKey: await importKey(ca.keyPem),
      signingAlgorithm: SIGN_ALG,
      ...validity(spec.days ?? 365),
      extensions,
    },
    x509Crypto,
  );
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}
