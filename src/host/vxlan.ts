// The VXLAN backend's kernel side, flannel's model (flannel backend/vxlan): one VTEP per node
// (`kdp-vxlan-1`, VNI 1, UDP 8472, no learning), addressed with the network address of the node's
// podCIDR as a /32; per remote node a permanent FDB entry (its VTEP MAC → its underlay IP), a
// permanent neighbour entry (its VTEP address → its VTEP MAC) and a route to its podCIDR via its
// VTEP address `onlink`. Nothing is learned from the wire: every entry comes from the Node
// objects (the node agent reads them from the API), so the API server is the only hub.
// syncVxlanPeers makes exactly the given peers (entries of peers gone are removed); only entries
// on the VTEP are read or touched.

import type { HostExec } from './exec.js';
import { linkName } from './names.js';
import { ipBatch, linkExists } from './netns.js';

export const VXLAN_VNI = 1;
/** flannel's (and Linux's historic) VXLAN port, not IANA's 4789. */
export const VXLAN_PORT = 8472;
/** Outer IPv4 (20) + UDP (8) + VXLAN (8) + inner Ethernet (14). */
export const VXLAN_OVERHEAD = 50;
export const VTEP_LINK = linkName('vxlan', String(VXLAN_VNI));

/** A locally administered MAC from the node's underlay IPv4 (02:76:a.b.c.d): fixed per node, so
 *  a rebooted node's VTEP is still what its peers have in their FDB and neighbour tables. */
export function vtepMac(nodeIP: string): string {
  return ['02', '76', ...nodeIP.split('.').map((o) => Number(o).toString(16).padStart(2, '0'))].join(':');
}

/** The VTEP's address: the network address of the node's IPv4 podCIDR (10.244.2.0), as flannel. */
export function vtepAddress(podCIDR: string): string {
  return podCIDR.split('/')[0]!;
}

export interface VtepConfig {
  /** The node's underlay IPv4 address (the tunnel's local end). */
  readonly localIP: string;
  /** The underlay link it leaves by (eth0). */
  readonly dev: string;
  readonly podCIDR: string;
  /** The underlay's MTU; the VTEP gets 50 less. */
  readonly underlayMtu?: number;
}

/** Makes the node's VTEP (idempotent); returns its MAC. */
export async function ensureVtep(exec: HostExec, ns: string, c: VtepConfig): Promise<string> {
  const mac = vtepMac(c.localIP);
  const mtu = (c.underlayMtu ?? 1500) - VXLAN_OVERHEAD;
  if (!(await linkExists(exec, ns, VTEP_LINK))) {
    await ipBatch(exec, ns, [`link add ${VTEP_LINK} type vxlan id ${VXLAN_VNI} local ${c.localIP} dev ${c.dev} ` +
      `dstport ${VXLAN_PORT} nolearning`]);
  }
  await ipBatch(exec, ns, [`link set ${VTEP_LINK} address ${mac} mtu ${mtu}`,
    `addr replace ${vtepAddress(c.podCIDR)}/32 dev ${VTEP_LINK}`, `link set ${VTEP_LINK} up`]);
  return mac;
}

export interface VxlanPeer {
  readonly podCIDR: string;
  /** The peer's VTEP address (its podCIDR's network address). */
  readonly vtepIP: string;
  readonly mac: string;
  /** The peer's underlay IP (the outer destination). */
  readonly underlayIP: string;
}

/** Makes the VTEP's FDB, neighbour and route entries exactly `peers`. */
export async function syncVxlanPeers(exec: HostExec, ns: string, peers: readonly VxlanPeer[]): Promise<void> {
  if (!(await linkExists(exec, ns, VTEP_LINK))) {
    if (peers.length === 0) return;
    throw new Error(`${ns}: no ${VTEP_LINK} (ensureVtep first)`);
  }
  const [routes, neigh, fdb] = await Promise.all([
    readJson<{ dst: string; gateway?: string }>(exec, 'ip', ['-n', ns, '-j', 'route', 'show', 'dev', VTEP_LINK]),
    readJson<{ dst: string; lladdr?: string }>(exec, 'ip', ['-n', ns, '-j', 'neigh', 'show', 'dev', VTEP_LINK]),
    readJson<{ mac: string; dst?: string }>(exec, 'bridge', ['-n', ns, '-j', 'fdb', 'show', 'dev', VTEP_LINK]),
  ]);
  const wantFdb = new Map(peers.map((p) => [p.mac, p.underlayIP]));
  const wantNeigh = new Map(peers.map((p) => [p.vtepIP, p.mac]));
  const wantRoute = new Map(peers.map((p) => [p.podCIDR, p.vtepIP]));
  const fdbLines: string[] = [];
  for (const e of fdb) {
    // The kernel's own entries (the all-zero default) carry no dst we set.
    if (e.dst && wantFdb.get(e.mac) !== e.dst) fdbLines.push(`fdb del ${e.mac} dev ${VTEP_LINK} dst ${e.dst} self`);
  }
  for (const [mac, dst] of wantFdb) {
    if (!fdb.some((e) => e.mac === mac && e.dst === dst)) {
      fdbLines.push(`fdb replace ${mac} dev ${VTEP_LINK} dst ${dst} self permanent`);
    }
  }
  const ipLines: string[] = [];
  for (const r of routes) {
    if (r.gateway && wantRoute.get(r.dst) !== r.gateway) ipLines.push(`route del ${r.dst} via ${r.gateway} dev ${VTEP_LINK}`);
  }
  for (const n of neigh) if (n.lladdr && wantNeigh.get(n.dst) !== n.lladdr) ipLines.push(`neigh del ${n.dst} dev ${VTEP_LINK}`);
  for (const [ip, mac] of wantNeigh) {
    if (!neigh.some((n) => n.dst === ip && n.lladdr === mac)) {
      ipLines.push(`neigh replace ${ip} lladdr ${mac} dev ${VTEP_LINK} nud permanent`);
    }
  }
  for (const [dst, via] of wantRoute) {
    if (!routes.some((r) => r.dst === dst && r.gateway === via)) {
      ipLines.push(`route replace ${dst} via ${via} dev ${VTEP_LINK} onlink`);
    }
  }
  if (fdbLines.length) await exec.run('bridge', ['-n', ns, '-batch', '-'], { input: `${fdbLines.join('\n')}\n` });
  await ipBatch(exec, ns, ipLines);
}

async function readJson<T>(exec: HostExec, file: string, args: readonly string[]): Promise<T[]> {
  const { stdout } = await exec.run(file, args);
  return JSON.parse(stdout.trim() || '[]') as T[];
}
