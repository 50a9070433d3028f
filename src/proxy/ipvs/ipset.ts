// The ipsets of the ipvs proxier (upstream pkg/proxy/ipvs/ipset.go): names, types, comments in
// upstream's list order, the IPv6 naming rule, member strings, and the per-sync active entries.

import type { IPFamily } from '../types.js';
import type { IpSet, IpSetOption, IpSetType } from '../../ruleset/ipvs/types.js';

export const KUBE_LOOP_BACK = 'KUBE-LOOP-BACK';
export const KUBE_CLUSTER_IP = 'KUBE-CLUSTER-IP';
export const KUBE_EXTERNAL_IP = 'KUBE-EXTERNAL-IP';
export const KUBE_EXTERNAL_IP_LOCAL = 'KUBE-EXTERNAL-IP-LOCAL';
export const KUBE_LOAD_BALANCER = 'KUBE-LOAD-BALANCER';
export const KUBE_LOAD_BALANCER_FW = 'KUBE-LOAD-BALANCER-FW';
export const KUBE_LOAD_BALANCER_LOCAL = 'KUBE-LOAD-BALANCER-LOCAL';
export const KUBE_LOAD_BALANCER_SOURCE_IP = 'KUBE-LOAD-BALANCER-SOURCE-IP';
export const KUBE_LOAD_BALANCER_SOURCE_CIDR = 'KUBE-LOAD-BALANCER-SOURCE-CIDR';
export const KUBE_NODE_PORT_TCP = 'KUBE-NODE-PORT-TCP';
export const KUBE_NODE_PORT_LOCAL_TCP = 'KUBE-NODE-PORT-LOCAL-TCP';
export const KUBE_NODE_PORT_UDP = 'KUBE-NODE-PORT-UDP';
export const KUBE_NODE_PORT_LOCAL_UDP = 'KUBE-NODE-PORT-LOCAL-UDP';
export const KUBE_NODE_PORT_SCTP = 'KUBE-NODE-PORT-SCTP-HASH';
export const KUBE_NODE_PORT_LOCAL_SCTP = 'KUBE-NODE-PORT-LOCAL-SCTP-HASH';
export const KUBE_HEALTH_CHECK_NODE_PORT = 'KUBE-HEALTH-CHECK-NODE-PORT';
export const KUBE_IPVS_IPS = 'KUBE-IPVS-IPS';

export interface IpSetInfo {
  /** The IPv4 (base) name; see `ipsetName` for the IPv6 one. */
  readonly name: string;
  readonly type: IpSetType;
  readonly comment: string;
}

/** Upstream's `ipsetInfo`, in its order (also the order of the `ipset save` golden section). */
export const IPSET_INFO: readonly IpSetInfo[] = [
  [KUBE_LOOP_BACK, 'hash:ip,port,ip',
    'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose'],
  [KUBE_CLUSTER_IP, 'hash:ip,port', 'Kubernetes service cluster ip + port for masquerade purpose'],
  [KUBE_EXTERNAL_IP, 'hash:ip,port',
    'Kubernetes service external ip + port for masquerade and filter purpose'],
  [KUBE_EXTERNAL_IP_LOCAL, 'hash:ip,port',
    'Kubernetes service external ip + port with externalTrafficPolicy=local'],
  [KUBE_LOAD_BALANCER, 'hash:ip,port', 'Kubernetes service lb portal'],
  [KUBE_LOAD_BALANCER_FW, 'hash:ip,port',
    'Kubernetes service load balancer ip + port for load balancer with sourceRange'],
  [KUBE_LOAD_BALANCER_LOCAL, 'hash:ip,port',
    'Kubernetes service load balancer ip + port with externalTrafficPolicy=local'],
  [KUBE_LOAD_BALANCER_SOURCE_IP, 'hash:ip,port,ip',
    'Kubernetes service load balancer ip + port + source IP for packet filter purpose'],
  [KUBE_LOAD_BALANCER_SOURCE_CIDR, 'hash:ip,port,net',
    'Kubernetes service load balancer ip + port + source cidr for packet filter purpose'],
  [KUBE_NODE_PORT_TCP, 'bitmap:port', 'Kubernetes nodeport TCP port for masquerade purpose'],
  [KUBE_NODE_PORT_LOCAL_TCP, 'bitmap:port',
    'Kubernetes nodeport TCP port with externalTrafficPolicy=local'],
  [KUBE_NODE_PORT_UDP, 'bitmap:port', 'Kubernetes nodeport UDP port for masquerade purpose'],
  [KUBE_NODE_PORT_LOCAL_UDP, 'bitmap:port',
    'Kubernetes nodeport UDP port with externalTrafficPolicy=local'],
  [KUBE_NODE_PORT_SCTP, 'hash:ip,port',
    'Kubernetes nodeport SCTP port for masquerade purpose with type \'hash ip:port\''],
  [KUBE_NODE_PORT_LOCAL_SCTP, 'hash:ip,port',
    'Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type \'hash ip:port\''],
  [KUBE_HEALTH_CHECK_NODE_PORT, 'bitmap:port', 'Kubernetes health check node port'],
  [KUBE_IPVS_IPS, 'hash:ip', 'Addresses on the ipvs interface'],
].map(([name, type, comment]) => ({ name: name!, type: type as IpSetType, comment: comment! }));

const INFO_BY_NAME = new Map(IPSET_INFO.map((i) => [i.name, i]));

export function ipsetInfo(base: string): IpSetInfo {
  const info = INFO_BY_NAME.get(base);
  if (info === undefined) throw new Error(`unknown ipvs ipset ${base}`);
  return info;
}

/** IPv6 proxier: first `KUBE-` → `KUBE-6-`, cut to ipset's 31-character limit. */
export function ipsetName(base: string, family: IPFamily): string {
  if (family === 'IPv4' || !base.startsWith('KUBE-')) return base;
  return base.replace('KUBE-', 'KUBE-6-').slice(0, 31);
}

/** `ipset create` options kube-proxy passes (no `comment`: sets are created without it). */
export function createOptions(type: IpSetType, family: IPFamily): IpSetOption[] {
  if (type === 'bitmap:port') return [{ key: 'range', value: '0-65535' }];
  return [
    { key: 'family', value: family === 'IPv4' ? 'inet' : 'inet6' },
    { key: 'hashsize', value: '1024' },
    { key: 'maxelem', value: '65536' },
  ];
}

/** Member strings as upstream's Entry.String(); `proto` is lower case. */
export const entry = {
  ipPort: (ip: string, proto: string, port: number) => `${ip},${proto}:${port}`,
  ipPortIp: (ip: string, proto: string, port: number, ip2: string) =>
    `${ip},${proto}:${port},${ip2}`,
  ipPortNet: (ip: string, proto: string, port: number, net: string) =>
    `${ip},${proto}:${port},${net}`,
  port: (port: number) => String(port),
};

/** Byte-wise string order (Go's sort.Strings / sets.List), the order upstream adds entries in. */
export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Active entries of every set for one sync (upstream's `activeEntries`), keyed by base name. */
export class ActiveIpSets {
  private readonly entries = new Map<string, Set<string>>(
    IPSET_INFO.map((i) => [i.name, new Set<string>()]));
  /** Entries of a set in byte order, computed once (the ops and the save text both need it). */
  private readonly sortedCache = new Map<string, readonly string[]>();

  insert(base: string, value: string): void {
    this.get(base).add(value);
    this.sortedCache.delete(base);
  }

  replace(base: string, values: Iterable<string>): void {
    this.entries.set(base, new Set(values));
    this.sortedCache.delete(base);
  }

  /** The entries of a set in byte order (do not modify). */
  sorted(base: string): readonly string[] {
    let out = this.sortedCache.get(base);
    if (out === undefined) {
      out = [...this.get(base)].sort(byteOrder);
      this.sortedCache.set(base, out);
    }
    return out;
  }

  get(base: string): Set<string> {
    const s = this.entries.get(base);
    if (s === undefined) throw new Error(`unknown ipvs ipset ${base}`);
    return s;
  }

  isEmpty(base: string): boolean {
    return this.get(base).size === 0;
  }

  /** Every set, in upstream's list order, entries in byte order, as `ipset save` models. */
  toIpSets(family: IPFamily): IpSet[] {
    return IPSET_INFO.map((info) => ({
      name: ipsetName(info.name, family),
      type: info.type,
      options: createOptions(info.type, family),
      entries: this.sorted(info.name).map((value) => ({ value })),
    }));
  }
}
