// The cluster's PKI under `<dataDir>/pki/`: a CA, the API server's serving certificate, the admin
// client certificate and the static token file. `ensurePki` is create-or-verify: it keeps what
// is present and valid, reissues leaf certificates that are missing, expiring, not signed by the
// CA or lacking a wanted SAN, and refuses (KDP_CONFIG) to overwrite a CA it cannot read.

import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { readFile, rename } from 'node:fs/promises';
import { ensurePrivateDir, writePrivateFile } from '../../util/private-files.js';
import { join } from 'node:path';
import { kdpError } from '../../errors.js';
import { formatTokenLine, parseTokenFile, type TokenEntry } from '../authn/token-file.js';
import { issueCa, issueLeaf, parseSan, type CertPair } from './issue.js';

export { issueCa, issueLeaf, type CertPair, type LeafSpec } from './issue.js';

export interface Pki {
  readonly caCertPem: string;
  readonly caKeyPem: string;
  readonly serverCertPem: string;
  readonly serverKeyPem: string;
  readonly adminCertPem: string;
  readonly adminKeyPem: string;
  /** Bearer token of `kubernetes-admin` (group system:masters), also in `tokenFile`. */
  readonly adminToken: string;
  /** Path of the `--token-auth-file` style CSV. */
  readonly tokenFile: string;
  /** `<dataDir>/pki`. */
  readonly dir: string;
}

export interface EnsurePkiOptions {
  /** More SANs for the serving certificate: `IP:10.0.0.1`, `DNS:kdp.local`, or bare values. */
  readonly extraSANs?: readonly string[];
}

export const ADMIN_USER = 'kubernetes-admin';
export const MASTERS_GROUP = 'system:masters';
/** As kubeadm's apiserver certificate, less the addresses only the caller knows (pass the
 *  `kubernetes` Service IP, e.g. `IP:10.96.0.1`, and node addresses in `extraSANs`). */
const DEFAULT_SANS = ['IP:127.0.0.1', 'DNS:localhost', 'DNS:kubernetes', 'DNS:kubernetes.default',
  'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local'];
const RENEW_BEFORE_MS = 30 * 86_400_000;

const FILES = {
  caCert: 'ca.crt', caKey: 'ca.key', serverCert: 'apiserver.crt', serverKey: 'apiserver.key',
  adminCert: 'admin.crt', adminKey: 'admin.key', tokens: 'tokens.csv',
} as const;

/** The file's text, or undefined when it does not exist. */
export async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw kdpError('KDP_CONFIG', `cannot read ${path}: ${(e as Error).message}`, {}, e);
  }
}

/** Writes through a temporary file and a rename, so a crash never leaves half a key. */
async function writeSecret(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  await writePrivateFile(tmp, text);
  await rename(tmp, path);
}

function pairMatches(pair: CertPair): boolean {
  try {
    return new X509Certificate(pair.certPem).checkPrivateKey(createPrivateKey(pair.keyPem));
  } catch {
    return false;
  }
}

function freshEnough(cert: X509Certificate): boolean {
  return Date.parse(cert.validTo) - Date.now() > RENEW_BEFORE_MS;
}

async function ensureCa(dir: string): Promise<CertPair> {
  const certPath = join(dir, FILES.caCert);
  const keyPath = join(dir, FILES.caKey);
  const [certPem, keyPem] = [await readIfPresent(certPath), await readIfPresent(keyPath)];
  if (certPem === undefined && keyPem === undefined) {
    const ca = await issueCa('kdp-ca');
    await writeSecret(keyPath, ca.keyPem);
    await writeSecret(certPath, ca.certPem);
    return ca;
  }
  if (certPem === undefined || keyPem === undefined) {
    throw kdpError('KDP_CONFIG', `incomplete CA in ${dir}: need both ${FILES.caCert} and ` +
      `${FILES.caKey} (remove both to generate a new CA)`);
  }
  if (!pairMatches({ certPem, keyPem }) || !new X509Certificate(certPem).ca) {
    throw kdpError('KDP_CONFIG', `${certPath} is not a CA certificate matching ${keyPath}`);
  }
  return { certPem, keyPem };
}

type LeafCheck = (cert: X509Certificate) => boolean;

async function ensureLeaf(
  dir: string, ca: CertPair, names: { cert: string; key: string }, accept: LeafCheck,
  issue: () => Promise<CertPair>,
): Promise<CertPair> {
  const certPem = await readIfPresent(join(dir, names.cert));
  const keyPem = await readIfPresent(join(dir, names.key));
  if (certPem !== undefined && keyPem !== undefined && pairMatches({ certPem, keyPem })) {
    const cert = new X509Certificate(certPem);
    const caCert = new X509Certificate(ca.certPem);
    if (cert.verify(caCert.publicKey) && freshEnough(cert) && accept(cert)) {
      return { certPem, keyPem };
    }
  }
  const pair = await issue();
  await writeSecret(join(dir, names.key), pair.keyPem);
  await writeSecret(join(dir, names.cert), pair.certPem);
  return pair;
}

function hasSan(cert: X509Certificate, san: string): boolean {
  const g = parseSan(san);
  if (g.type === 'ip') return cert.checkIP(g.value) !== undefined;
  return cert.checkHost(g.value, { subject: 'never', wildcards: false }) !== undefined;
}

function subjectHas(cert: X509Certificate, line: string): boolean {
  return cert.subject.split('\n').includes(line);
}

async function ensureAdminToken(path: string): Promise<string> {
  const text = await readIfPresent(path);
  const entries = text === undefined ? [] : parseTokenFile(text, path);
  const found = entries.find(
    (e) => e.user.name === ADMIN_USER && e.user.groups.includes(MASTERS_GROUP),
  );
  if (found) return found.token;
  const entry: TokenEntry = {
    token: randomBytes(24).toString('base64url'),
    user: { name: ADMIN_USER, uid: ADMIN_USER, groups: [MASTERS_GROUP] },
  };
  const prefix = text === undefined || text === '' || text.endsWith('\n') ? (text ?? '')
    : `${text}\n`;
  await writeSecret(path, prefix + formatTokenLine(entry));
  return entry.token;
}

/** Creates (once) or loads the PKI in `<dataDir>/pki`. Idempotent; see the module comment. */
export async function ensurePki(dataDir: string, opts: EnsurePkiOptions = {}): Promise<Pki> {
  const dir = join(dataDir, 'pki');
  await ensurePrivateDir(dir);
  const ca = await ensureCa(dir);
  const sans = [...DEFAULT_SANS, ...(opts.extraSANs ?? [])];
  const server = await ensureLeaf(
    dir, ca, { cert: FILES.serverCert, key: FILES.serverKey },
    (c) => sans.every((s) => hasSan(c, s)),
    () => issueLeaf(ca, { commonName: 'kube-apiserver', usage: 'server', sans }),
  );
  const admin = await ensureLeaf(
    dir, ca, { cert: FILES.adminCert, key: FILES.adminKey },
    (c) => subjectHas(c, `CN=${ADMIN_USER}`) && subjectHas(c, `O=${MASTERS_GROUP}`),
    () => issueClientCertificate(ca, { commonName: ADMIN_USER, organizations: [MASTERS_GROUP] }),
  );
  const tokenFile = join(dir, FILES.tokens);
  const adminToken = await ensureAdminToken(tokenFile);
  return {
    caCertPem: ca.certPem, caKeyPem: ca.keyPem,
    serverCertPem: server.certPem, serverKeyPem: server.keyPem,
    adminCertPem: admin.certPem, adminKeyPem: admin.keyPem,
    adminToken, tokenFile, dir,
  };
}

/**
 * A client certificate signed by the cluster CA: user = CN, groups = O values. Node agents use
 * `{commonName: 'system:node:<name>', organizations: ['system:nodes']}`.
 */
export function issueClientCertificate(
  ca: CertPair,
  who: { commonName: string; organizations?: readonly string[]; days?: number },
): Promise<CertPair> {
  return issueLeaf(ca, { ...who, usage: 'client' });
}

/** The CA of a Pki as a CertPair, for `issueClientCertificate(caOf(pki), ...)`. */
export function caOf(pki: Pki): CertPair {
  return { certPem: pki.caCertPem, keyPem: pki.caKeyPem };
}
