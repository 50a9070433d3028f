// The lab cloud behind the cloud-controller-manager's route and node controllers (issue 19).
// netns mode: the "VPC" is this machine's namespaces. A route {node, podCIDR} is put into effect
// as a host-gw route (`podCIDR via <node's InternalIP> dev eth0`) in every other node namespace
// on the same underlay segment whose backend sends that way (cni/backend.ts pathBetween: host-gw,
// or auto between nodes of one segment) — a cloud router reaches nodes only on the segment it
// serves; VXLAN peers are the node agents' (addons/kdp-cni.ts). A node's machine exists while
// its namespace does. Virtual mode: the route table alone, no instances.

import { existsSync } from 'node:fs';
import { cidrContains } from '../api/net.js';
import type { Node } from '../api/types.js';
import { netNodeOf, pathBetween, type NetNode } from '../cni/backend.js';
import { buildMemoryRoutes, type CloudInstances, type CloudRoute, type CloudRoutes } from '../controllers/route/cloud.js';
import type { NetnsDataPlane } from './data-plane-netns.js';

export interface LabCloud {
  readonly routes: CloudRoutes;
  readonly instances?: CloudInstances;
}

/** The host-gw peers of `self` a route table puts into effect (grouped by target node). */
export function labRoutesFor(
  self: NetNode, selfSegment: string | undefined, nodes: ReadonlyMap<string, NetNode>, table: readonly CloudRoute[],
): Array<{ name: string; ips: string[]; podCIDRs: string[] }> {
  const peers = new Map<string, { name: string; ips: string[]; podCIDRs: string[] }>();
  for (const r of table) {
    const target = nodes.get(r.targetNode);
    if (!target || target.name === self.name || pathBetween(self, target) !== 'host-gw') continue;
    const ip = target.ips.find((x) => x.includes(':') === r.destinationCIDR.includes(':'));
    // On the segment: IPv4 by the segment's subnet; IPv6 shares it (the lab's v6 is single-host).
    if (!ip || (selfSegment && !ip.includes(':') && !cidrContains(selfSegment, ip))) continue;
    const p = peers.get(target.name) ?? { name: target.name, ips: [...target.ips], podCIDRs: [] };
    p.podCIDRs.push(r.destinationCIDR);
    peers.set(target.name, p);
  }
  return [...peers.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function buildNetnsLabCloud(d: {
  plane: NetnsDataPlane; nodes: () => readonly Node[]; onError: (e: unknown) => void;
}): LabCloud {
  const { plane } = d;
  const exists = (name: string) => existsSync(`/run/netns/${plane.topo.nodeNetns(name)}`);
  let chain: Promise<void> = Promise.resolve();
  const program = (table: readonly CloudRoute[]) => {
    chain = chain.then(async () => {
      const nodes = new Map(d.nodes().map((n) => [n.metadata.name!, netNodeOf(n)]));
      await Promise.all([...nodes.values()].filter((n) => exists(n.name)).map(async (self) => {
        const segment = self.underlayCIDR ?? plane.topo.hostOf(self.name).cidr;
        await plane.topo.syncRoutes(self.name, labRoutesFor(self, segment, nodes, table))
          .catch((e) => { if (exists(self.name)) d.onError(e); }); // a node going away mid-sync
      }));
    });
    return chain;
  };
  return { routes: buildMemoryRoutes(program), instances: { exists: async (name) => exists(name) } };
}

export function buildVirtualLabCloud(): LabCloud {
  return { routes: buildMemoryRoutes() };
}
