// The bridge plugin's verbs (cni.md §2) with kdp's stricter guarantees (§5): ADD is atomic — on
// any failure everything this call made is undone in reverse order; DEL is complete whatever
// state the pod namespace is in; the plugin's own namespace is refused before any side effect.

import { createHash } from 'node:crypto';
import { formatCIDR, parseCIDR } from '../api/net.js';
import { buildHostLocalIpam, type HostLocalIpam } from './ipam/host-local.js';
import type { IpamStore } from './ipam/store.js';
import { addMasq, removeMasq } from './masq.js';
import type { BridgeConf } from './netconf.js';
import { isSameNetns, netnsExists, type Targets } from './netns-target.js';
import { parsePrevResult, type CniResult, type CniRoute } from './result.js';
import { CNI_CODES, CniError } from './spec.js';

export interface AttachmentRef {
  readonly containerID: string;
  readonly ifname: string;
  /** CNI_NETNS path ('' allowed for DEL). */
  readonly netns: string;
}

export interface BridgeDeps {
  readonly targets: Targets;
  readonly ipamStore: IpamStore;
}

/** Host end of the veth: derived from the attachment, so DEL can find it without the pod. */
export function hostVethName(containerID: string, ifname: string): string {
  return `kdpv${createHash('sha256').update(`${containerID}/${ifname}`).digest('hex').slice(0, 8)}`;
}

export function refuseOwnNetns(t: Targets, podNetns: string): void {
  if (podNetns && isSameNetns(podNetns, t.nodeNetnsPath)) {
    throw new CniError(CNI_CODES.invalidNetns, "plugin's netns and netns from CNI_NETNS should not be the same");
  }
}

function ipamFor(conf: BridgeConf, store: IpamStore): HostLocalIpam | undefined {
  if (!conf.ipam) return undefined;
  if (conf.ipam.type !== 'host-local') {
    throw new CniError(CNI_CODES.unsupportedField, `unsupported field: ipam.type "${conf.ipam.type}" (kdp-cni implements host-local)`);
  }
  try {
    return buildHostLocalIpam(conf.ipam.ranges, store);
  } catch (e) {
    throw new CniError(CNI_CODES.invalidNetworkConfig, (e as Error).message);
  }
}

export async function cmdAdd(conf: BridgeConf, att: AttachmentRef, deps: BridgeDeps, requestedIPs: string[]): Promise<CniResult> {
  const t = deps.targets;
  refuseOwnNetns(t, att.netns);
  if (!netnsExists(att.netns)) {
    throw new CniError(CNI_CODES.internal,
      `failed to open netns "${att.netns}": failed to Statfs "${att.netns}": no such file or directory`);
  }
  const podLinks = await linkNames(t, 'pod');
  if (podLinks.includes(att.ifname)) {
    throw new CniError(CNI_CODES.internal, `container veth name provided (${att.ifname}) already exists`);
  }
  const ipam = ipamFor(conf, deps.ipamStore);
  const undo: Array<() => Promise<unknown>> = [];
  try {
    const ips = ipam ? allocate(ipam, att, requestedIPs) : [];
    if (ipam) undo.push(async () => ipam.release(att.containerID, att.ifname));
    await ensureBridge(t, conf);
    const hostVeth = hostVethName(att.containerID, att.ifname);
    await t.pod('ip', ['link', 'add', att.ifname, ...(conf.mtu ? ['mtu', String(conf.mtu)] : []), 'type', 'veth',
      'peer', 'name', hostVeth, 'netns', t.nodeNetnsArg]);
    undo.push(() => t.ipNode(['link', 'del', hostVeth]).catch(() => undefined));
    await t.ipNode(['-batch', '-'], [
      `link set ${hostVeth} master ${conf.bridge}`,
      ...(conf.hairpinMode ? [`link set ${hostVeth} type bridge_slave hairpin on`] : []),
      `link set ${hostVeth} up`,
    ].join('\n') + '\n');
    const withGw = ips.map((ip) => ({ ...ip, gateway: ip.gateway || (conf.isGateway ? firstHost(ip.address) : '') }));
    const routes = resultRoutes(conf, withGw);
    await configurePod(t, att.ifname, withGw, routes);
    if (conf.isGateway) await ensureGateways(t, conf, withGw);
    if (conf.ipMasq && withGw.length > 0) {
      undo.push(() => removeMasq(t, conf.name, att.containerID));
      await addMasq(t, conf.name, att.containerID, withGw.map((ip) => ({
        address: ip.address.split('/')[0]!, subnet: subnetOf(ip.address), v6: ip.address.includes(':'),
      })));
    }
    const macs = await linkMacs(t, conf.bridge, hostVeth, att.ifname);
    return {
      interfaces: [
        { name: conf.bridge, mac: macs.bridge },
        { name: hostVeth, mac: macs.host },
        { name: att.ifname, mac: macs.pod, sandbox: att.netns },
      ],
      ips: withGw.map((ip) => ({ interface: 2, address: ip.address, ...(ip.gateway ? { gateway: ip.gateway } : {}) })),
      routes,
      dns: (conf.raw.dns as Record<string, unknown> | undefined) ?? {},
    };
  } catch (e) {
    for (const u of undo.reverse()) await u().catch(() => undefined);
    throw e;
  }
}

function allocate(ipam: HostLocalIpam, att: AttachmentRef, requested: string[]) {
  try {
    return ipam.allocate(att.containerID, att.ifname, requested);
  } catch (e) {
    throw new CniError(CNI_CODES.internal, (e as Error).message);
  }
}

function firstHost(cidr: string): string {
  const c = parseCIDR(subnetOf(cidr))!;
  return formatCIDR({ family: c.family, base: c.base + 1n, prefix: c.prefix }).split('/')[0]!;
}

function subnetOf(address: string): string {
  const [ip, len] = address.split('/');
  const c = parseCIDR(`${ip}/${len}`);
  if (!c) throw new CniError(CNI_CODES.internal, `invalid CIDR address: ${address}`);
  const bits = c.family === 'IPv4' ? 32 : 128;
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - c.prefix)) - 1n);
  return formatCIDR({ family: c.family, base: c.base & mask, prefix: c.prefix });
}

function resultRoutes(conf: BridgeConf, ips: readonly { address: string; gateway: string }[]): CniRoute[] {
  const routes: CniRoute[] = [...(conf.ipam?.routes ?? [])];
  if (conf.isDefaultGateway) {
    for (const ip of ips) {
      const dst = ip.address.includes(':') ? '::/0' : '0.0.0.0/0';
      if (!routes.some((r) => r.dst === dst)) routes.push({ dst, gw: ip.gateway });
    }
  }
  return routes;
}

async function configurePod(t: Targets, ifname: string, ips: readonly { address: string; gateway: string }[], routes: readonly CniRoute[]): Promise<void> {
  const lines = ips.map((ip) => `addr add ${ip.address} dev ${ifname}`);
  lines.push(`link set ${ifname} up`, 'link set lo up');
  for (const r of routes) {
    const v6 = r.dst.includes(':');
    const gw = r.gw ?? ips.find((ip) => ip.address.includes(':') === v6)?.gateway;
    if (!gw) continue;
    lines.push(`route ${r.dst.endsWith('/0') ? 'replace' : 'add'} ${r.dst} via ${gw} dev ${ifname}`);
  }
  await t.pod('ip', ['-batch', '-'], `${lines.join('\n')}\n`);
  await t.pod('sysctl', ['-q', '-w', `net.ipv4.conf.${ifname}.arp_notify=1`,
    `net.ipv6.conf.${ifname}.accept_dad=0`]);
}

async function ensureBridge(t: Targets, conf: BridgeConf): Promise<void> {
  const links = await linkDetails(t);
  const br = links.find((l) => l.ifname === conf.bridge);
  if (br && br.kind !== 'bridge') {
    throw new CniError(CNI_CODES.internal, `${conf.bridge} already exists but is not a bridge`);
  }
  const lines = br ? [] : [`link add ${conf.bridge} ${conf.mtu ? `mtu ${conf.mtu} ` : ''}type bridge`];
  if (conf.promiscMode) lines.push(`link set ${conf.bridge} promisc on`);
  lines.push(`link set ${conf.bridge} up`);
  await t.ipNode(['-batch', '-'], `${lines.join('\n')}\n`);
  await t.node('sysctl', ['-q', '-w', `net.ipv6.conf.${conf.bridge}.accept_ra=0`]);
}

async function ensureGateways(t: Targets, conf: BridgeConf, ips: readonly { address: string; gateway: string }[]): Promise<void> {
  const { stdout } = await t.ipNode(['-j', 'addr', 'show', 'dev', conf.bridge]);
  const have = ((JSON.parse(stdout)[0]?.addr_info ?? []) as Array<{ family: string; local: string; prefixlen: number }>);
  const lines: string[] = [];
  let v4 = false;
  let v6 = false;
  for (const ip of ips) {
    const want = `${ip.gateway}/${ip.address.split('/')[1]}`;
    const fam = ip.address.includes(':') ? 'inet6' : 'inet';
    if (fam === 'inet') v4 = true; else v6 = true;
    if (have.some((a) => a.family === fam && `${a.local}/${a.prefixlen}` === want)) continue;
    const clash = have.find((a) => a.family === 'inet' && fam === 'inet');
    if (clash) {
      if (!conf.forceAddress) {
        throw new CniError(CNI_CODES.internal,
          `failed to set bridge addr: "${conf.bridge}" already has an IP address different from ${want}`);
      }
      lines.push(`addr del ${clash.local}/${clash.prefixlen} dev ${conf.bridge}`);
    }
    lines.push(`addr add ${want} dev ${conf.bridge}`);
  }
  if (lines.length) await t.ipNode(['-batch', '-'], `${lines.join('\n')}\n`);
  if (v4) await t.node('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  if (v6) await t.node('sysctl', ['-q', '-w', 'net.ipv6.conf.all.forwarding=1']);
}

interface LinkDetail { ifname: string; kind?: string; mac?: string }

async function linkDetails(t: Targets, where: 'node' | 'pod' = 'node'): Promise<LinkDetail[]> {
  const { stdout } = where === 'node' ? await t.ipNode(['-j', '-d', 'link', 'show']) : await t.pod('ip', ['-j', '-d', 'link', 'show']);
  return (JSON.parse(stdout || '[]') as Array<Record<string, any>>).map((l) => ({
    ifname: String(l.ifname), kind: l.linkinfo?.info_kind, mac: l.address,
  }));
}

async function linkNames(t: Targets, where: 'node' | 'pod'): Promise<string[]> {
  return (await linkDetails(t, where)).map((l) => l.ifname);
}

async function linkMacs(t: Targets, bridge: string, host: string, pod: string) {
  const node = await linkDetails(t, 'node');
  const inPod = await linkDetails(t, 'pod');
  return {
    bridge: node.find((l) => l.ifname === bridge)?.mac,
    host: node.find((l) => l.ifname === host)?.mac,
    pod: inPod.find((l) => l.ifname === pod)?.mac,
  };
}

/** Best effort and idempotent: succeeds when things are already gone (spec DEL). */
export async function cmdDel(conf: BridgeConf, att: AttachmentRef, deps: BridgeDeps): Promise<void> {
  const t = deps.targets;
  refuseOwnNetns(t, att.netns);
  if (att.netns && netnsExists(att.netns)) {
    await t.pod('ip', ['link', 'del', att.ifname]).catch(() => undefined);
  }
  await t.ipNode(['link', 'del', hostVethName(att.containerID, att.ifname)]).catch(() => undefined);
  const ipam = ipamFor(conf, deps.ipamStore);
  ipam?.release(att.containerID, att.ifname);
  if (conf.ipMasq) await removeMasq(t, conf.name, att.containerID);
}

export async function cmdCheck(conf: BridgeConf, att: AttachmentRef, deps: BridgeDeps): Promise<void> {
  const t = deps.targets;
  refuseOwnNetns(t, att.netns);
  const ipam = ipamFor(conf, deps.ipamStore);
  if (ipam && ipam.get(att.containerID, att.ifname).length === 0) {
    throw new CniError(CNI_CODES.internal, `host-local: Failed to find address added by container ${att.containerID}`);
  }
  if (!conf.prevResult) throw new CniError(CNI_CODES.internal, 'Required prevResult missing');
  const prev = parsePrevResult(conf.prevResult);
  const ctr = prev.interfaces.find((i) => i.sandbox !== undefined && i.sandbox !== '');
  if (!ctr || ctr.sandbox !== att.netns) {
    throw new CniError(CNI_CODES.internal, `Sandbox in prevResult does not match CNI_NETNS ${att.netns}`);
  }
  const { stdout } = await t.pod('ip', ['-j', 'addr', 'show', 'dev', att.ifname]).catch(() => ({ stdout: '' }));
  const link = (JSON.parse(stdout || '[]') as Array<Record<string, any>>)[0];
  if (!link) throw new CniError(CNI_CODES.internal, `Failed to find container interface ${att.ifname}`);
  if (ctr.mac && link.address !== ctr.mac) {
    throw new CniError(CNI_CODES.internal, `Interface ${att.ifname} Mac ${ctr.mac} doesn't match container Mac: ${link.address}`);
  }
  const addrs = (link.addr_info ?? []).map((a: any) => `${a.local}/${a.prefixlen}`);
  for (const ip of prev.ips) {
    if (!addrs.includes(ip.address)) throw new CniError(CNI_CODES.internal, `Failed to match addr ${ip.address} on interface ${att.ifname}`);
  }
  const routes = await t.pod('ip', ['-j', 'route', 'show', 'table', 'all']);
  const have = JSON.parse(routes.stdout || '[]') as Array<{ dst: string }>;
  for (const r of prev.routes) {
    const dst = r.dst === '0.0.0.0/0' || r.dst === '::/0' ? 'default' : r.dst;
    if (!have.some((h) => h.dst === dst)) {
      throw new CniError(CNI_CODES.internal, `Expected Route {Dst:${r.dst}} not found in routing table`);
    }
  }
}

/** Releases reservations and rules of attachments not in the valid list; continues past errors. */
export async function cmdGc(conf: BridgeConf, deps: BridgeDeps): Promise<void> {
  const valid = new Set((conf.validAttachments ?? []).map((a) => `${a.containerID}\0${a.ifname}`));
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const r of deps.ipamStore.list()) {
    const key = `${r.id}\0${r.ifname}`;
    if (valid.has(key) || seen.has(key)) continue;
    seen.add(key);
    try {
      await cmdDel(conf, { containerID: r.id, ifname: r.ifname, netns: '' }, deps);
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  if (errors.length) throw new CniError(CNI_CODES.internal, `GC: ${errors.join('; ')}`);
}
