// nodes/proxy's location, as upstream's node ResourceLocation: `{scheme}:{name}:{port}` ids,
// the node's InternalIP (else its first address), the kubelet port from
// status.daemonEndpoints.kubeletEndpoint.Port (10250 when unpublished), https by default. Only
// the kubelet's own port gets the API server's kubelet client certificate.

import type { Node } from '../../api/types.js';
import { kdpError } from '../../errors.js';
import type { ProxyLocation } from './locations.js';

export const DEFAULT_KUBELET_PORT = 10250;

export function nodeLocation(node: Node, scheme: string, port: string): ProxyLocation & { kubelet: boolean } {
  const name = node.metadata.name!;
  const addrs = node.status?.addresses ?? [];
  const ip = (addrs.find((a) => a.type === 'InternalIP') ?? addrs[0])?.address;
  if (!ip) throw kdpError('KDP_UNAVAILABLE', `no preferred addresses found; known addresses: []`);
  const kubeletPort = node.status?.daemonEndpoints?.kubeletEndpoint?.Port || DEFAULT_KUBELET_PORT;
  const p = port === '' ? kubeletPort : Number(port);
  if (!Number.isInteger(p) || p <= 0 || p > 65535) {
    throw kdpError('KDP_BAD_REQUEST', `invalid port ${JSON.stringify(port)} for node ${name}`);
  }
  return { scheme: scheme === 'http' ? 'http' : 'https', ip, port: p, node: name, kubelet: p === kubeletPort };
}
