// The kernel changes of one bridge ADD, as `ip -batch` lines and sysctl writes, computed from the
// config, the allocated IPs and what is known of the bridge. Pure: no I/O, so the checks that can
// fail (an address clash on the bridge) happen before anything is changed. Names stand after
// `name`/`dev` keywords, so one that is also an `ip` keyword (`up`, `type`) stays a name.

import { randomBytes } from 'node:crypto';
import type { BridgeAddr, BridgeState } from './bridge-state.js';
import type { BridgeConf } from './netconf.js';
import type { CniRoute } from './result.js';
import { CNI_CODES, CniError } from './spec.js';

export interface GwIP {
  /** `ip/prefix` */
  readonly address: string;
  /** '' when there is none. */
  readonly gateway: string;
}

export interface BridgePlan {
  /** Batch lines in the node namespace (create/up/address the bridge). */
  readonly lines: string[];
  /** `key=value` sysctls for the node namespace. */
  readonly sysctls: string[];
  /** The bridge as it will be once the lines and sysctls are applied. */
  readonly state: BridgeState;
}

/** A sysctl name from path segments; dots inside a segment (an interface name) become `/`. */
export function sysctlKey(...segments: string[]): string {
  return segments.map((s) => s.replace(/\./g, '/')).join('.');
}

/** A random locally administered unicast MAC. */
export function randomMac(): string {
  const b = randomBytes(6);
  b[0] = (b[0]! & 0xfe) | 0x02;
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
}

const family = (address: string): 'inet' | 'inet6' => (address.includes(':') ? 'inet6' : 'inet');

/** True when `state` already has every gateway address the IPs need (nothing to add). */
export function coversGateways(conf: BridgeConf, state: BridgeState, ips: readonly GwIP[]): boolean {
  if (!conf.isGateway) return true;
  return ips.every((ip) => !ip.gateway || state.addrs.some((a) =>
    a.local === ip.gateway && a.prefixlen === Number(ip.address.split('/')[1])));
}

/** Ensures the bridge and (with isGateway) the gateway addresses and forwarding. */
export function planBridge(
  conf: BridgeConf, known: BridgeState | undefined, ips: readonly GwIP[],
): BridgePlan {
  const br = conf.bridge;
  const lines: string[] = [];
  const sysctls: string[] = [];
  const mac = known?.mac ?? randomMac();
  if (!known) lines.push(`link add name ${br} address ${mac}${conf.mtu ? ` mtu ${conf.mtu}` : ''} type bridge`);
  if (conf.promiscMode) lines.push(`link set dev ${br} promisc on`);
  if (!known?.raOff) sysctls.push(`${sysctlKey('net', 'ipv6', 'conf', br, 'accept_ra')}=0`);
  if (!known?.up) lines.push(`link set dev ${br} up`);
  let addrs: BridgeAddr[] = [...(known?.addrs ?? [])];
  const forwarding = { v4: known?.forwarding.v4 ?? false, v6: known?.forwarding.v6 ?? false };
  for (const ip of conf.isGateway ? ips : []) {
    if (!ip.gateway) continue;
    const fam = family(ip.address);
    const want: BridgeAddr = { family: fam, local: ip.gateway, prefixlen: Number(ip.address.split('/')[1]) };
    const text = `${want.local}/${want.prefixlen}`;
    if (fam === 'inet' && !forwarding.v4) sysctls.push('net.ipv4.ip_forward=1');
    if (fam === 'inet6' && !forwarding.v6) sysctls.push('net.ipv6.conf.all.forwarding=1');
    forwarding[fam === 'inet' ? 'v4' : 'v6'] = true;
    const same = (a: BridgeAddr) => a.family === fam && a.local === want.local && a.prefixlen === want.prefixlen;
    if (addrs.some(same)) continue;
    const clash = fam === 'inet' ? addrs.find((a) => a.family === 'inet') : undefined;
    if (clash) {
      if (!conf.forceAddress) {
        throw new CniError(CNI_CODES.internal,
          `failed to set bridge addr: "${br}" already has an IP address different from ${text}`);
      }
      lines.push(`addr del ${clash.local}/${clash.prefixlen} dev ${br}`);
      addrs = addrs.filter((a) => a !== clash);
    }
    // No DAD on the gateway: pods may use it as soon as ADD returns.
    lines.push(`addr add ${text} dev ${br}${fam === 'inet6' ? ' nodad' : ''}`);
    addrs.push(want);
  }
  return { lines, sysctls: [...new Set(sysctls)], state: { mac, up: true, addrs, forwarding, raOff: true } };
}

/** The pod side after the veth exists: addresses, link up, routes (one `ip -batch`). */
export function podBatchText(ifname: string, ips: readonly GwIP[], routes: readonly CniRoute[]): string {
  const lines = ips.map((ip) => `addr add ${ip.address} dev ${ifname}`);
  lines.push(`link set dev ${ifname} up`, 'link set dev lo up');
  for (const r of routes) {
    const v6 = r.dst.includes(':');
    const gw = r.gw ?? ips.find((ip) => ip.address.includes(':') === v6)?.gateway;
    if (!gw) continue;
    lines.push(`route ${r.dst.endsWith('/0') ? 'replace' : 'add'} ${r.dst} via ${gw} dev ${ifname}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The pod interface's sysctls (cni.md §2.2 step 5), as `sysctl -e -w` arguments. */
export function podSysctls(ifname: string): string[] {
  return [`${sysctlKey('net', 'ipv4', 'conf', ifname, 'arp_notify')}=1`,
    `${sysctlKey('net', 'ipv6', 'conf', ifname, 'accept_dad')}=0`];
}
