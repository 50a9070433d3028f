// `kdp node join`'s control-plane half, as `kubeadm join` + the kubelet's TLS bootstrap:
// 1. discovery (kubeadm discovery/token): read kube-public/cluster-info without trusting the
//    server yet, check the `jws-kubeconfig-<id>` signature with the token's secret and the CA's
//    public key against the pin, then read it again over TLS verified by that CA;
// 2. TLS bootstrap (kubelet certificate/bootstrap): a new key and a CSR for
//    `system:node:<name>` in `system:nodes` (signer kube-apiserver-client-kubelet) sent as
//    `system:bootstrap:<id>`, then wait until csrapproving and csrsigning have issued it;
// 3. the node's kubeconfig (`<data-dir>/nodes/<name>/kubelet.conf`, the certificate embedded),
//    and `node-agent.conf`: a year's token of ServiceAccount kube-system/kdp-node-agent (got with
//    the bootstrap token) for the cluster-wide reads of the in-agent kube-proxy and policy agent.
// Every check happens before the first file is written; a kubelet.conf that is still good
// (signed by the pinned CA, for this node and server, not expiring within a day) is reused.

import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { KUBELET_CLIENT_SIGNER, type CertificateSigningRequest } from '../api/certificates.js';
import { createCsr } from '../apiserver/pki/sign-csr.js';
import { buildHttpClient } from '../client/http-client.js';
import { loadKubeconfig, renderKubeconfig } from '../client/kubeconfig.js';
import type { Client, KubeObject } from '../client/types.js';
import { isKdpError, kdpError } from '../errors.js';
import { ensurePrivateDir, writePrivateFile } from '../util/private-files.js';
import {
  CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, JWS_KEY_PREFIX, KUBECONFIG_KEY, caCertHash, hashProblem,
} from './cluster-info.js';
import { detachedSignatureIsValid } from './jws.js';
import { NODE_AGENT_SERVICE_ACCOUNT } from '../apiserver/authz/bootstrap.js';
import { formatToken, parseToken, type BootstrapToken } from './token.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps', namespace: CLUSTER_INFO_NAMESPACE } as const;
const CSRS = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests' } as const;
const NODE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface JoinOptions {
  /** `https://HOST:PORT` the discovery reads cluster-info from. */
  readonly server: string;
  readonly token: string;
  /** `sha256:<hex>` pins; at least one unless `unsafeSkipCaVerification`. */
  readonly caCertHashes: readonly string[];
  readonly unsafeSkipCaVerification?: boolean;
  readonly nodeName: string;
  readonly dataDir: string;
  /** How long discovery waits for a cluster-info signed by this token (kubeadm: 5 min). */
  readonly discoveryTimeoutMs?: number;
  /** How long to wait for the signed certificate. */
  readonly certificateTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

export interface JoinResult {
  /** The node's kubeconfig (the kubelet: system:node:<name>). */
  readonly kubeconfig: string;
  /** The kubeconfig of the node's in-agent kube-proxy and policy agent (ServiceAccount
   *  kube-system/kdp-node-agent's token). */
  readonly agentKubeconfig: string;
  /** Whether an existing kubelet.conf was reused (no CSR). */
  readonly reused: boolean;
  readonly csrName?: string;
}

export function kubeletConfPath(dataDir: string, nodeName: string): string {
  return join(dataDir, 'nodes', nodeName, 'kubelet.conf');
}

export function agentConfPath(dataDir: string, nodeName: string): string {
  return join(dataDir, 'nodes', nodeName, 'node-agent.conf');
}

const SA_TOKEN_SECONDS = 365 * 86_400;
const AGENT_SA = { group: '', version: 'v1', resource: 'serviceaccounts', namespace: 'kube-system' } as const;

/** Whether the agent kubeconfig's token is good for another day (its JWT `exp`). */
function agentTokenFresh(path: string): boolean {
  if (!existsSync(path)) return false;
  try {
    const token = loadKubeconfig(path).token ?? '';
    const exp = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { exp?: number }).exp;
    return typeof exp === 'number' && exp * 1000 - Date.now() > 86_400_000;
  } catch {
    return false;
  }
}

/** Checks the flags before anything is contacted; KDP_CONFIG naming the flag. */
export function checkJoinOptions(o: JoinOptions): BootstrapToken {
  let url: URL;
  try {
    url = new URL(o.server);
  } catch {
    throw kdpError('KDP_CONFIG', `API server ${JSON.stringify(o.server)}: not a URL (https://HOST:PORT)`);
  }
  if (url.protocol !== 'https:') throw kdpError('KDP_CONFIG', `API server ${o.server}: must be https://HOST:PORT`);
  const token = parseToken(o.token);
  if (!token) {
    throw kdpError('KDP_CONFIG', '--token: the token does not match the required format "[a-z0-9]{6}.[a-z0-9]{16}"');
  }
  if (!NODE_NAME.test(o.nodeName)) {
    throw kdpError('KDP_CONFIG', `--name: ${JSON.stringify(o.nodeName)} is not a valid node name (a DNS subdomain)`);
  }
  if (o.caCertHashes.length === 0 && !o.unsafeSkipCaVerification) {
    throw kdpError('KDP_CONFIG', '--discovery-token-ca-cert-hash: required (sha256:<hex> of the cluster CA\'s ' +
      'public key, as `kdp up` prints it), or --discovery-token-unsafe-skip-ca-verification');
  }
  for (const h of o.caCertHashes) {
    const p = hashProblem(h);
    if (p) throw kdpError('KDP_CONFIG', `--discovery-token-ca-cert-hash: ${p}`);
  }
  return token;
}

interface ClusterInfoKubeconfig { server: string; caPem: string }

function parseClusterInfoKubeconfig(text: string): ClusterInfoKubeconfig {
  const doc = parse(text) as { clusters?: Array<{ cluster?: Record<string, string> }> } | null;
  const cluster = doc?.clusters?.[0]?.cluster;
  const ca = cluster?.['certificate-authority-data'];
  if (!cluster?.server || !ca) {
    throw kdpError('KDP_UNAUTHORIZED', 'the cluster-info kubeconfig names no server or CA');
  }
  return { server: cluster.server, caPem: Buffer.from(ca, 'base64').toString('utf8') };
}

async function readClusterInfo(client: Client): Promise<Record<string, string>> {
  const cm = await client.get<KubeObject & { data?: Record<string, string> }>(CONFIGMAPS, CLUSTER_INFO_NAME);
  return cm.data ?? {};
}

/** Discovery: the trusted server and CA from cluster-info (see the module comment). */
export async function discover(o: JoinOptions, token: BootstrapToken): Promise<ClusterInfoKubeconfig> {
  const log = o.log ?? (() => {});
  const insecure = buildHttpClient({ server: o.server, insecureSkipVerify: true });
  const deadline = Date.now() + (o.discoveryTimeoutMs ?? 300_000);
  let data: Record<string, string> | undefined;
  let last = '';
  try {
    for (;;) {
      try {
        const d = await readClusterInfo(insecure);
        if (d[`${JWS_KEY_PREFIX}${token.id}`]) { data = d; break; }
        last = `could not find a JWS signature in the cluster-info ConfigMap for token ID "${token.id}": ` +
          'the token is unknown to this cluster or has expired (`kdp token create` on the control plane makes ' +
          'a new one)';
      } catch (e) {
        last = `cannot read ${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME} from ${o.server}: ${(e as Error).message}`;
      }
      if (Date.now() >= deadline) throw kdpError('KDP_UNAUTHORIZED', `discovery failed: ${last}`);
      log(`discovery: retrying: ${last}`);
      await sleep(Math.min(1000, Math.max(50, deadline - Date.now())));
    }
  } finally {
    insecure.close();
  }
  const content = data[KUBECONFIG_KEY] ?? '';
  if (!detachedSignatureIsValid(data[`${JWS_KEY_PREFIX}${token.id}`]!, content, token.id, token.secret)) {
    throw kdpError('KDP_UNAUTHORIZED', 'failed to verify JWS signature of received cluster info object, ' +
      'can\'t trust this API Server');
  }
  const info = parseClusterInfoKubeconfig(content);
  if (!o.unsafeSkipCaVerification) {
    const actual = caCertHash(info.caPem);
    if (!o.caCertHashes.some((h) => h.toLowerCase() === actual)) {
      throw kdpError('KDP_UNAUTHORIZED', `cluster CA found in cluster-info ConfigMap is invalid: none of the ` +
        `public keys "${actual}" are pinned (--discovery-token-ca-cert-hash)`);
    }
  }
  // kubeadm's second read, now verifying the server by the pinned CA: the same document?
  const secure = buildHttpClient({ server: o.server, caPem: info.caPem });
  try {
    const again = await readClusterInfo(secure);
    if (again[KUBECONFIG_KEY] !== content) {
      throw kdpError('KDP_UNAUTHORIZED', 'cluster-info changed between the insecure and the secure read: ' +
        'can\'t trust this API Server');
    }
  } finally {
    secure.close();
  }
  return info;
}

/** A kubelet.conf that can be kept: for this node, this server, signed by the CA, good for a day. */
function reusable(path: string, server: string, caPem: string, nodeName: string): boolean {
  if (!existsSync(path)) return false;
  try {
    const k = loadKubeconfig(path);
    if (k.server !== server || k.caPem !== caPem || !k.certPem) return false;
    const cert = new X509Certificate(k.certPem);
    return cert.verify(new X509Certificate(caPem).publicKey) && cert.subject.split('\n').includes(`CN=system:node:${nodeName}`)
      && Date.parse(cert.validTo) - Date.now() > 86_400_000;
  } catch {
    return false;
  }
}

/** kubelet's digestedName: one CSR name per key, subject and usages (a retry finds its own). */
function csrName(csrPem: string, nodeName: string, usages: readonly string[]): string {
  const h = createHash('sha512').update(csrPem).update(nodeName).update(usages.join(',')).digest('base64url');
  return `node-csr-${h.slice(0, 43)}`;
}

/** Polls the CSR until it is issued (the PEM), denied or failed (KDP_FORBIDDEN), past
 *  `timeoutMs` (KDP_TIMEOUT; Infinity waits as long as it takes) or `signal` aborts. */
export async function waitForCertificate(client: Client, name: string, timeoutMs: number,
  signal?: AbortSignal): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 100; ; wait = Math.min(500, wait * 2)) {
    signal?.throwIfAborted();
    const csr = await client.get<CertificateSigningRequest>(CSRS, name);
    const conds = csr.status?.conditions ?? [];
    const denied = conds.find((c) => c.type === 'Denied');
    if (denied) throw kdpError('KDP_FORBIDDEN', `certificate signing request ${name} was denied: ${denied.message ?? denied.reason ?? ''}`);
    const failed = conds.find((c) => c.type === 'Failed');
    if (failed) throw kdpError('KDP_FORBIDDEN', `certificate signing request ${name} failed: ${failed.message ?? failed.reason ?? ''}`);
    if (csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
    if (Date.now() >= deadline) {
      throw kdpError('KDP_TIMEOUT', `certificate signing request ${name} was not ${conds.some((c) => c.type === 'Approved')
        ? 'signed (is the controller manager running with the cluster CA?)'
        : 'approved (approve it with `kubectl certificate approve`, or check the token\'s groups)'} ` +
        `within ${Math.round(timeoutMs / 1000)} s`);
    }
    await sleep(wait, undefined, signal ? { signal } : {});
  }
}

/** Discovery, TLS bootstrap and the node's kubeconfig; see the module comment. */
export async function joinCluster(o: JoinOptions): Promise<JoinResult> {
  const token = checkJoinOptions(o);
  const log = o.log ?? (() => {});
  const info = await discover(o, token);
  log(`discovery: cluster-info verified (CA ${caCertHash(info.caPem)}), API server ${info.server}`);
  const path = kubeletConfPath(o.dataDir, o.nodeName);
  const agentPath = agentConfPath(o.dataDir, o.nodeName);
  if (reusable(path, info.server, info.caPem, o.nodeName) && agentTokenFresh(agentPath)) {
    log(`reusing the node's credentials in ${path}`);
    return { kubeconfig: path, agentKubeconfig: agentPath, reused: true };
  }
  const boot = buildHttpClient({ server: info.server, caPem: info.caPem, token: formatToken(token) });
  try {
    const { csrPem, keyPem } = await createCsr({ commonName: `system:node:${o.nodeName}`, organizations: ['system:nodes'] });
    const usages = ['digital signature', 'client auth'];
    const name = csrName(csrPem, o.nodeName, usages);
    try {
      await boot.create(CSRS, { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest',
        metadata: { name },
        spec: { request: Buffer.from(csrPem, 'utf8').toString('base64'), signerName: KUBELET_CLIENT_SIGNER, usages },
      } as KubeObject);
    } catch (e) {
      if (isKdpError(e, 'KDP_UNAUTHORIZED')) {
        throw kdpError('KDP_UNAUTHORIZED', `the API server refused bootstrap token "${token.id}" (expired, deleted ` +
          'or not for authentication): `kdp token create` on the control plane makes a new one');
      }
      throw e;
    }
    log(`TLS bootstrap: certificate signing request ${name} sent as system:bootstrap:${token.id}`);
    const certPem = await waitForCertificate(boot, name, o.certificateTimeoutMs ?? 120_000);
    log(`TLS bootstrap: certificate issued for system:node:${o.nodeName}`);
    const review = await boot.create<KubeObject & { status?: { token?: string } }>(AGENT_SA, {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {},
      spec: { expirationSeconds: SA_TOKEN_SECONDS } } as KubeObject,
    { name: NODE_AGENT_SERVICE_ACCOUNT, subresource: 'token' });
    if (!review.status?.token) throw kdpError('KDP_INTERNAL', 'the TokenRequest for the node agents gave no token');
    await ensurePrivateDir(o.dataDir);
    await ensurePrivateDir(join(o.dataDir, 'nodes'));
    await ensurePrivateDir(join(o.dataDir, 'nodes', o.nodeName));
    await writePrivateFile(path, renderKubeconfig({ server: info.server, caPem: info.caPem, certPem, keyPem,
      clusterName: 'kdp' }), { atomic: true });
    await writePrivateFile(agentPath, renderKubeconfig({ server: info.server, caPem: info.caPem,
      token: review.status.token, clusterName: 'kdp' }), { atomic: true });
    return { kubeconfig: path, agentKubeconfig: agentPath, reused: false, csrName: name };
  } finally {
    boot.close();
  }
}

/** The node's client from its kubelet.conf (tests and `kdp node join`). */
export function nodeClientOf(kubeconfig: string): Client {
  return buildHttpClient(loadKubeconfig(kubeconfig));
}
