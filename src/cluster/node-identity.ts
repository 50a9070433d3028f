// The clients a node's agents use in an in-process cluster (`kdp up`): each node gets its own
// certificates from the cluster CA (pki/node-credentials.ts) and its kubelet and kube-proxy
// act as the users those certificates name — `system:node:<name>` in `system:nodes`, and
// kubeadm's kube-proxy ServiceAccount — so the Node authorizer and NodeRestriction apply to
// them as to a node process (`kdp node`) that connects over HTTPS with the same certificates.

import type { ApiService } from '../apiserver/service.js';
import {
  ensureNodeCredentials, readClusterCa, subjectOf, userOf,
} from '../apiserver/pki/node-credentials.js';
import type { CertPair } from '../apiserver/pki/index.js';
import { buildHttpClient } from '../client/http-client.js';
import { buildInProcessClient } from '../client/in-process.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import type { Client } from '../client/types.js';

export interface NodeClients {
  readonly kubelet: Client;
  readonly kubeProxy: Client;
}

export type NodeClientsFactory = (nodeName: string) => Promise<NodeClients>;

export function buildInProcessNodeClients(
  service: ApiService, dataDir: string, ca: CertPair,
): NodeClientsFactory {
  return async (nodeName) => {
    const creds = await ensureNodeCredentials(dataDir, ca, nodeName);
    return {
      kubelet: buildInProcessClient(service, userOf(subjectOf(creds.kubelet.certPem))),
      kubeProxy: buildInProcessClient(service, userOf(subjectOf(creds.kubeProxy.certPem))),
    };
  };
}

/**
 * The clients of a separate `kdp node` process: the kubeconfig's server and CA with the node's
 * own certificates, issued from the data dir's cluster CA. Where the CA key is not readable
 * (a node on another machine), the kubeconfig's own credentials are used, and `warn` says so.
 */
export async function nodeProcessClients(
  kubeconfig: string, dataDir: string, nodeName: string, fallback: Client,
  warn: (line: string) => void,
): Promise<NodeClients> {
  const ca = await readClusterCa(dataDir);
  if (!ca) {
    warn(`no cluster CA key in ${dataDir}/pki: running with the kubeconfig's identity`);
    return { kubelet: fallback, kubeProxy: fallback };
  }
  const creds = await ensureNodeCredentials(dataDir, ca, nodeName);
  const base = loadKubeconfig(kubeconfig);
  const via = (pair: CertPair): Client => buildHttpClient({ server: base.server,
    ...(base.caPem ? { caPem: base.caPem } : {}), certPem: pair.certPem, keyPem: pair.keyPem });
  return { kubelet: via(creds.kubelet), kubeProxy: via(creds.kubeProxy) };
}

/**
 * The kubelet serving certificate of a `kdp node` process, got the way its client identity is:
 * issued from the data dir's cluster CA for the node's name, InternalIPs and 127.0.0.1.
 * Undefined without the CA key (a node on another machine): `kdp node join` then asks by a
 * kubelet-serving CSR (bootstrap/kubelet-serving.ts); plain `kdp node` serves no kubelet API.
 */
export async function nodeProcessKubeletTls(dataDir: string, nodeName: string, nodeIPs: readonly string[]):
  Promise<{ certPem: string; keyPem: string; caPem: string } | undefined> {
  const ca = await readClusterCa(dataDir);
  if (!ca) return undefined;
  const { issueKubeletServing } = await import('../kubelet/server/serve.js');
  return issueKubeletServing(ca, nodeName, nodeIPs);
}
