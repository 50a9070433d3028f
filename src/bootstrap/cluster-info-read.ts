// The API server address a cluster advertises to joining nodes: the server of its cluster-info
// kubeconfig (kubeadm's controlPlaneEndpoint / advertise address), read with any client.

import { parse } from 'yaml';
import type { Client, KubeObject } from '../client/types.js';
import { isKdpError } from '../errors.js';
import { CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, KUBECONFIG_KEY } from './cluster-info.js';

export async function readClusterJoinServer(client: Client): Promise<string | undefined> {
  try {
    const cm = await client.get<KubeObject & { data?: Record<string, string> }>(
      { group: '', version: 'v1', resource: 'configmaps', namespace: CLUSTER_INFO_NAMESPACE }, CLUSTER_INFO_NAME);
    const doc = parse(cm.data?.[KUBECONFIG_KEY] ?? '') as { clusters?: Array<{ cluster?: { server?: string } }> } | null;
    return doc?.clusters?.[0]?.cluster?.server;
  } catch (e) {
    if (isKdpError(e, 'KDP_NOT_FOUND')) return undefined;
    throw e;
  }
}
