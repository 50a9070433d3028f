// Each node agent's own identity, issued by the cluster CA (kubeadm's join gives a kubelet a
// client certificate for `system:node:<name>` in `system:nodes`): the kubelet's certificate and
// the one of the node's kube-proxy, which acts as kubeadm runs it — ServiceAccount
// kube-system/kube-proxy (groups system:serviceaccounts[:kube-system]), bound to
// `system:node-proxier` by `kubeadm:node-proxier`. Kept per node under
// `<dataDir>/pki/nodes/<name>/` (so node processes starting together never share a file) and
// reissued when missing, expiring, not signed by the CA, or for another subject.

import { X509Certificate, createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import { kdpError } from '../../errors.js';
import { ensurePrivateDir, writePrivateFile } from '../../util/private-files.js';
import type { UserInfo } from '../pipeline-types.js';
import { readIfPresent } from './index.js';
import { issueLeaf, type CertPair } from './issue.js';

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';
export const KUBE_PROXY_USER = 'system:serviceaccount:kube-system:kube-proxy';
export const KUBE_PROXY_GROUPS: readonly string[] = ['system:serviceaccounts',
  'system:serviceaccounts:kube-system'];

const RENEW_BEFORE_MS = 30 * 86_400_000;
/** Node names are DNS subdomains: no path separators can reach the file system. */
const NODE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface Subject {
  readonly commonName: string;
  readonly organizations: readonly string[];
}

export interface NodeCredentials {
  /** The kubelet: system:node:<name> in system:nodes. */
  readonly kubelet: CertPair;
  /** The node's kube-proxy: kubeadm's kube-proxy ServiceAccount identity. */
  readonly kubeProxy: CertPair;
}

export function kubeletSubject(nodeName: string): Subject {
  return { commonName: `${NODE_USER_PREFIX}${nodeName}`, organizations: [NODES_GROUP] };
}

export const KUBE_PROXY_SUBJECT: Subject = { commonName: KUBE_PROXY_USER,
  organizations: KUBE_PROXY_GROUPS };

/** The user the API server's x509 authenticator makes of a certificate with `s`. */
export function userOf(s: Subject): UserInfo {
  return { name: s.commonName, groups: [...s.organizations, 'system:authenticated'] };
}

/** The subject of a PEM certificate (CN and O values, in order). */
export function subjectOf(certPem: string): Subject {
  const lines = new X509Certificate(certPem).subject.split('\n');
  const values = (k: string) => lines.filter((l) => l.startsWith(`${k}=`))
    .map((l) => l.slice(k.length + 1));
  return { commonName: values('CN')[0] ?? '', organizations: values('O') };
}

/** The cluster CA of a data dir, or undefined when its key is not there (another machine). */
export async function readClusterCa(dataDir: string): Promise<CertPair | undefined> {
  const dir = join(dataDir, 'pki');
  const certPem = await readIfPresent(join(dir, 'ca.crt'));
  const keyPem = await readIfPresent(join(dir, 'ca.key'));
  return certPem && keyPem ? { certPem, keyPem } : undefined;
}

function usable(pair: CertPair, ca: CertPair, want: Subject): boolean {
  try {
    const cert = new X509Certificate(pair.certPem);
    if (!cert.checkPrivateKey(createPrivateKey(pair.keyPem))) return false;
    if (!cert.verify(new X509Certificate(ca.certPem).publicKey)) return false;
    if (Date.parse(cert.validTo) - Date.now() <= RENEW_BEFORE_MS) return false;
    const s = subjectOf(pair.certPem);
    return s.commonName === want.commonName &&
      s.organizations.join('\n') === want.organizations.join('\n');
  } catch {
    return false;
  }
}

async function ensurePair(dir: string, base: string, ca: CertPair, want: Subject):
  Promise<CertPair> {
  const certPath = join(dir, `${base}.crt`);
  const keyPath = join(dir, `${base}.key`);
  const certPem = await readIfPresent(certPath);
  const keyPem = await readIfPresent(keyPath);
  if (certPem && keyPem && usable({ certPem, keyPem }, ca, want)) return { certPem, keyPem };
  const pair = await issueLeaf(ca, { commonName: want.commonName,
    organizations: want.organizations, usage: 'client' });
  await writePrivateFile(keyPath, pair.keyPem, { atomic: true });
  await writePrivateFile(certPath, pair.certPem, { atomic: true });
  return pair;
}

/** Creates (once) or loads node `nodeName`'s certificates, signed by `ca`. */
export async function ensureNodeCredentials(dataDir: string, ca: CertPair, nodeName: string):
  Promise<NodeCredentials> {
  if (!NODE_NAME.test(nodeName)) {
    throw kdpError('KDP_CONFIG', `node name ${JSON.stringify(nodeName)} is not a DNS subdomain`);
  }
  const nodes = join(dataDir, 'pki', 'nodes');
  await ensurePrivateDir(nodes);
  const dir = join(nodes, nodeName);
  await ensurePrivateDir(dir);
  return {
    kubelet: await ensurePair(dir, 'kubelet', ca, kubeletSubject(nodeName)),
    kubeProxy: await ensurePair(dir, 'kube-proxy', ca, KUBE_PROXY_SUBJECT),
  };
}
