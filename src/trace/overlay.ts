// The tracer's view of the pod network between nodes: for each node, the peers whose pods it
// reaches over VXLAN, by the same rule the node agents program (cni/backend.ts planPeers) from
// the same Node annotations. A cluster without them (virtual, or host-gw) gets none.

import type { Node } from '../api/types.js';
import { netNodeOf, planPeers } from '../cni/backend.js';
import { VTEP_LINK, VXLAN_PORT, VXLAN_VNI } from '../host/vxlan.js';
import type { VxlanInfo } from './topology.js';

export function vxlanInfoOf(nodes: readonly Node[]): Map<string, VxlanInfo> {
  const net = nodes.map(netNodeOf);
  const out = new Map<string, VxlanInfo>();
  for (const self of net) {
    const src = self.ips.find((ip) => !ip.includes(':'));
    const { vxlan } = planPeers(self, net);
    if (!src || vxlan.length === 0) continue;
    out.set(self.name, { iface: VTEP_LINK, vni: VXLAN_VNI, port: VXLAN_PORT,
      peers: new Map(vxlan.map((p) => [p.name, { src, dst: p.underlayIP }])) });
  }
  return out;
}
