// The `cluster-info` ConfigMap in kube-public (kubeadm's bootstraptoken/clusterinfo phase): a
// kubeconfig holding only the cluster (server and CA), readable by anyone, and one
// `jws-kubeconfig-<token id>` detached signature per signing token, kept by the bootstrapsigner
// controller. A joining node trusts the kubeconfig once a signature made with its token checks
// and the CA's public key matches the pin it was given (`sha256:<hex>` of the DER
// SubjectPublicKeyInfo, kubeadm's pubkeypin).

import { createHash, X509Certificate } from 'node:crypto';
import { stringify } from 'yaml';
import type { KubeObject } from '../client/types.js';

export const CLUSTER_INFO_NAMESPACE = 'kube-public';
export const CLUSTER_INFO_NAME = 'cluster-info';
export const KUBECONFIG_KEY = 'kubeconfig';
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';
/** kubeadm's Role and RoleBinding letting system:anonymous get cluster-info. */
export const CLUSTER_INFO_RBAC_NAME = 'kubeadm:bootstrap-signer-clusterinfo';

/** The kubeconfig kubeadm puts in cluster-info: one unnamed cluster, nothing else. */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return stringify({
    apiVersion: 'v1',
    clusters: [{ cluster: { 'certificate-authority-data': Buffer.from(caPem, 'utf8').toString('base64'), server },
      name: '' }],
    contexts: null, 'current-context': '', kind: 'Config', preferences: {}, users: null,
  });
}

/** `sha256:<hex>` of the certificate's DER SubjectPublicKeyInfo (kubeadm's pin format). */
export function caCertHash(certPem: string): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

/** Checks a `--discovery-token-ca-cert-hash` value's form; the message names the flag. */
export function hashProblem(pin: string): string | undefined {
  if (!pin.startsWith('sha256:')) {
    return `unsupported hash format "${pin}": only "sha256:<hex>" pins are supported`;
  }
  return /^[0-9a-f]{64}$/i.test(pin.slice(7)) ? undefined
    : `"${pin}" is not a SHA-256 pin: expected 64 hex digits after "sha256:"`;
}

/** kubeadm's cluster-info objects: the ConfigMap and the anonymous read of it. */
export function clusterInfoObjects(server: string, caPem: string): KubeObject[] {
  const rbac = 'rbac.authorization.k8s.io';
  return [
    { apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: CLUSTER_INFO_NAME, namespace: CLUSTER_INFO_NAMESPACE },
      data: { [KUBECONFIG_KEY]: clusterInfoKubeconfig(server, caPem) } } as KubeObject,
    { apiVersion: `${rbac}/v1`, kind: 'Role',
      metadata: { name: CLUSTER_INFO_RBAC_NAME, namespace: CLUSTER_INFO_NAMESPACE },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'],
        resourceNames: [CLUSTER_INFO_NAME] }] } as KubeObject,
    { apiVersion: `${rbac}/v1`, kind: 'RoleBinding',
      metadata: { name: CLUSTER_INFO_RBAC_NAME, namespace: CLUSTER_INFO_NAMESPACE },
      roleRef: { apiGroup: rbac, kind: 'Role', name: CLUSTER_INFO_RBAC_NAME },
      subjects: [{ apiGroup: rbac, kind: 'User', name: 'system:anonymous' }] } as KubeObject,
  ];
}
