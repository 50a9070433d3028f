// Object names of upstream's nftables proxier (pkg/proxy/nftables/proxier.go): fixed names of
// the shared chains/sets/maps and the hashed, readable names of per-service objects.

import { sha256Base32x8 } from '../sha256.js';
import type { IPFamily, ServicePortName } from '../types.js';

export const KUBE_PROXY_TABLE = 'kube-proxy';

// base chains
export const FILTER_PREROUTING_PRE_DNAT = 'filter-prerouting-pre-dnat';
export const FILTER_OUTPUT_PRE_DNAT = 'filter-output-pre-dnat';
export const FILTER_INPUT = 'filter-input';
export const FILTER_FORWARD = 'filter-forward';
export const FILTER_OUTPUT = 'filter-output';
export const NAT_PREROUTING = 'nat-prerouting';
export const NAT_OUTPUT = 'nat-output';
export const NAT_POSTROUTING = 'nat-postrouting';

// regular chains, sets and maps
export const SERVICES_CHAIN = 'services';
export const SERVICE_IPS_MAP = 'service-ips';
export const SERVICE_NODEPORTS_MAP = 'service-nodeports';
export const NODEPORT_IPS_SET = 'nodeport-ips';
export const CLUSTER_IPS_SET = 'cluster-ips';
export const CLUSTER_IPS_CHECK_CHAIN = 'cluster-ips-check';
export const SERVICE_ENDPOINTS_CHECK_CHAIN = 'service-endpoints-check';
export const NODEPORT_ENDPOINTS_CHECK_CHAIN = 'nodeport-endpoints-check';
export const NO_ENDPOINT_SERVICES_MAP = 'no-endpoint-services';
export const NO_ENDPOINT_NODEPORTS_MAP = 'no-endpoint-nodeports';
export const REJECT_CHAIN = 'reject-chain';
export const FIREWALL_IPS_MAP = 'firewall-ips';
export const FIREWALL_CHECK_CHAIN = 'firewall-check';
export const MARK_MASQ_CHAIN = 'mark-for-masquerade';
export const MASQUERADING_CHAIN = 'masquerading';

export const SERVICE_POLICY_CLUSTER_PREFIX = 'service-';
export const SERVICE_POLICY_LOCAL_PREFIX = 'local-';
export const SERVICE_EXTERNAL_PREFIX = 'external-';
export const SERVICE_FIREWALL_PREFIX = 'firewall-';
export const ENDPOINT_PREFIX = 'endpoint-';
export const AFFINITY_PREFIX = 'affinity-';

/** nftables names are at most 256 bytes; the longest prefix is 16 (`…-` up to `external-`). */
const CHAIN_NAME_BASE_LENGTH_MAX = 240;

/** The first 8 RFC 4648 base32 characters (upper case) of SHA-256(`s`): its first 40 bits. */
function hash8(s: string): string {
  return sha256Base32x8(s);
}

/** `HASH8-name`, truncated to 240 characters with a `...` suffix. */
export function hashAndTruncate(name: string): string {
  const full = `${hash8(name)}-${name}`;
  if (full.length > CHAIN_NAME_BASE_LENGTH_MAX) {
    return full.slice(0, CHAIN_NAME_BASE_LENGTH_MAX - 3) + '...';
  }
  return full;
}

/** `HASH-ns/name/proto/port` (protocol lower case, unnamed port = ''). */
export function servicePortChainNameBase(n: ServicePortName): string {
  return hashAndTruncate(`${n.namespace}/${n.name}/${n.protocol.toLowerCase()}/${n.port}`);
}

/** `HASH-ns/name/proto/port__ip/port`, IPv6 colons replaced by dots. */
export function endpointChainNameBase(n: ServicePortName, ip: string, port: number): string {
  const host = ip.includes(':') ? ip.replaceAll(':', '.') : ip;
  const proto = n.protocol.toLowerCase();
  return hashAndTruncate(`${n.namespace}/${n.name}/${proto}/${n.port}__${host}/${port}`);
}

/** Per-service chains are the only chains whose names contain `/`. */
export function isServiceChainName(chain: string): boolean {
  return chain.includes('/');
}

export function isAffinitySetName(set: string): boolean {
  return set.startsWith(AFFINITY_PREFIX);
}

/** The words that differ between the IPv4 and IPv6 tables. */
export interface FamilyWords {
  /** `ip` | `ip6` */
  readonly ipX: string;
  /** `ipv4_addr` | `ipv6_addr` */
  readonly addrType: string;
  /** `ip daddr != 127.0.0.0/8` | `ip6 daddr != ::1` */
  readonly noLocalhost: readonly string[];
  readonly nftFamily: 'ip' | 'ip6';
}

export function familyWords(f: IPFamily): FamilyWords {
  return f === 'IPv4'
    ? { ipX: 'ip', addrType: 'ipv4_addr', noLocalhost: ['ip', 'daddr', '!=', '127.0.0.0/8'],
      nftFamily: 'ip' }
    : { ipX: 'ip6', addrType: 'ipv6_addr', noLocalhost: ['ip6', 'daddr', '!=', '::1'],
      nftFamily: 'ip6' };
}

/** Go's `%#08x` of `1 << bit`: `0x` + at least 8 hex digits (`0x00004000`). */
export function masqueradeMark(bit: number): string {
  return '0x' + (2 ** bit).toString(16).padStart(8, '0');
}
