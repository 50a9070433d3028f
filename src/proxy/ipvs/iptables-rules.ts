// The supplementary iptables restore input of the ipvs proxier (upstream writeIptablesRules,
// acceptIPVSTraffic, createAndLinkKubeChain). Every rule is set-driven, so the text depends only
// on which sets are non-empty, the LB entries without node access, and the configuration.
// Layout: `*nat`, nat chains, nat rules, COMMIT, `*filter`, filter chains, filter rules, COMMIT.

import type { ProxierConfig } from '../backend.js';
import { buildLocalDetector } from '../iptables/local-detector.js';
import {
  ActiveIpSets, ipsetInfo, ipsetName, KUBE_CLUSTER_IP, KUBE_EXTERNAL_IP, KUBE_EXTERNAL_IP_LOCAL,
  KUBE_HEALTH_CHECK_NODE_PORT, KUBE_IPVS_IPS, KUBE_LOAD_BALANCER, KUBE_LOAD_BALANCER_FW,
  KUBE_LOAD_BALANCER_LOCAL, KUBE_LOAD_BALANCER_SOURCE_CIDR, KUBE_LOAD_BALANCER_SOURCE_IP,
  KUBE_LOOP_BACK, KUBE_NODE_PORT_LOCAL_SCTP, KUBE_NODE_PORT_LOCAL_TCP, KUBE_NODE_PORT_LOCAL_UDP,
  KUBE_NODE_PORT_SCTP, KUBE_NODE_PORT_TCP, KUBE_NODE_PORT_UDP,
} from './ipset.js';

export const KUBE_SERVICES = 'KUBE-SERVICES';
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
export const KUBE_SOURCE_RANGES_FIREWALL = 'KUBE-SOURCE-RANGES-FIREWALL';
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';
export const KUBE_NODE_PORT = 'KUBE-NODE-PORT';
export const KUBE_FORWARD = 'KUBE-FORWARD';
export const KUBE_LOAD_BALANCER_CHAIN = 'KUBE-LOAD-BALANCER';
export const KUBE_IPVS_FILTER = 'KUBE-IPVS-FILTER';
export const KUBE_IPVS_OUT_FILTER = 'KUBE-IPVS-OUT-FILTER';

type Table = 'nat' | 'filter';

/** Upstream `iptablesChains`: declared (and ensured) in this order. */
export const IPTABLES_CHAINS: readonly { table: Table; chain: string }[] = [
  { table: 'nat', chain: KUBE_SERVICES },
  { table: 'nat', chain: KUBE_POSTROUTING },
  { table: 'nat', chain: KUBE_NODE_PORT },
  { table: 'nat', chain: KUBE_LOAD_BALANCER_CHAIN },
  { table: 'nat', chain: KUBE_MARK_MASQ },
  { table: 'filter', chain: KUBE_FORWARD },
  { table: 'filter', chain: KUBE_NODE_PORT },
  { table: 'filter', chain: KUBE_PROXY_FIREWALL },
  { table: 'filter', chain: KUBE_SOURCE_RANGES_FIREWALL },
  { table: 'filter', chain: KUBE_IPVS_FILTER },
  { table: 'filter', chain: KUBE_IPVS_OUT_FILTER },
];

/**
 * Upstream `iptablesJumpChain`: rules ensured (prepended unless present) in built-in chains on
 * every sync, outside the restore input: `-m comment --comment COMMENT -j TO`.
 */
export interface JumpRule {
  readonly table: Table;
  readonly from: string;
  readonly to: string;
  readonly comment: string;
}

export const IPTABLES_JUMPS: readonly JumpRule[] = ([
  ['nat', 'OUTPUT', KUBE_SERVICES, 'kubernetes service portals'],
  ['nat', 'PREROUTING', KUBE_SERVICES, 'kubernetes service portals'],
  ['nat', 'POSTROUTING', KUBE_POSTROUTING, 'kubernetes postrouting rules'],
  ['filter', 'FORWARD', KUBE_FORWARD, 'kubernetes forwarding rules'],
  ['filter', 'INPUT', KUBE_NODE_PORT, 'kubernetes health check rules'],
  ['filter', 'INPUT', KUBE_PROXY_FIREWALL, 'kube-proxy firewall rules'],
  ['filter', 'FORWARD', KUBE_PROXY_FIREWALL, 'kube-proxy firewall rules'],
  ['filter', 'INPUT', KUBE_IPVS_FILTER, 'kubernetes ipvs access filter'],
  ['filter', 'OUTPUT', KUBE_IPVS_OUT_FILTER, 'kubernetes ipvs access filter'],
] as const).map(([table, from, to, comment]) => ({ table, from, to, comment }));

/** Upstream `ipsetWithIptablesChain` (LOCAL node-port sets come before their plain sets). */
const SET_JUMPS: readonly [string, Table, string, string, string, string][] = [
  [KUBE_LOOP_BACK, 'nat', KUBE_POSTROUTING, 'MASQUERADE', 'dst,dst,src', ''],
  [KUBE_LOAD_BALANCER, 'nat', KUBE_SERVICES, KUBE_LOAD_BALANCER_CHAIN, 'dst,dst', ''],
  [KUBE_LOAD_BALANCER_LOCAL, 'nat', KUBE_LOAD_BALANCER_CHAIN, 'RETURN', 'dst,dst', ''],
  [KUBE_NODE_PORT_LOCAL_TCP, 'nat', KUBE_NODE_PORT, 'RETURN', 'dst', 'tcp'],
  [KUBE_NODE_PORT_TCP, 'nat', KUBE_NODE_PORT, KUBE_MARK_MASQ, 'dst', 'tcp'],
  [KUBE_NODE_PORT_LOCAL_UDP, 'nat', KUBE_NODE_PORT, 'RETURN', 'dst', 'udp'],
  [KUBE_NODE_PORT_UDP, 'nat', KUBE_NODE_PORT, KUBE_MARK_MASQ, 'dst', 'udp'],
  [KUBE_NODE_PORT_LOCAL_SCTP, 'nat', KUBE_NODE_PORT, 'RETURN', 'dst,dst', 'sctp'],
  [KUBE_NODE_PORT_SCTP, 'nat', KUBE_NODE_PORT, KUBE_MARK_MASQ, 'dst,dst', 'sctp'],
  [KUBE_LOAD_BALANCER_FW, 'filter', KUBE_PROXY_FIREWALL, KUBE_SOURCE_RANGES_FIREWALL,
    'dst,dst', ''],
  [KUBE_LOAD_BALANCER_SOURCE_CIDR, 'filter', KUBE_SOURCE_RANGES_FIREWALL, 'RETURN',
    'dst,dst,src', ''],
  [KUBE_LOAD_BALANCER_SOURCE_IP, 'filter', KUBE_SOURCE_RANGES_FIREWALL, 'RETURN',
    'dst,dst,src', ''],
];

/** An LB VIP:port that the node itself may not reach (no source range contains the node IP). */
export interface NoNodeAccessEntry {
  readonly ip: string;
  /** Lower case. */
  readonly protocol: string;
  readonly port: number;
}

export interface IptablesInput {
  readonly config: ProxierConfig;
  readonly sets: ActiveIpSets;
  readonly lbNoNodeAccess: readonly NoNodeAccessEntry[];
  /** The mark string, e.g. `0x00004000` (see `masqueradeMark`). */
  readonly mark: string;
}

/** Go `fmt.Sprintf("%#08x", 1<<bit)`: digits zero-padded to 8, then `0x` (e.g. `0x00004000`). */
export function masqueradeMark(bit: number): string {
  return `0x${(1 << bit >>> 0).toString(16).padStart(8, '0')}`;
}

const quoted = (s: string) => `"${s}"`;

/** The restore input, exactly as upstream's syncProxyRules assembles it. */
export function writeIptablesRules(input: IptablesInput): string {
  const { config, sets, mark } = input;
  const name = (base: string) => ipsetName(base, config.family);
  const cmt = (base: string) => quoted(ipsetInfo(base).comment);
  const nat: string[] = [];
  const filter: string[] = [];
  const lo = config.family === 'IPv6' ? '::1/128' : '127.0.0.0/8';
  nat.push(`-A ${KUBE_SERVICES} -s ${lo} -j RETURN`);
  for (const [set, table, from, to, match, proto] of SET_JUMPS) {
    if (sets.isEmpty(set)) continue;
    const p = proto === '' ? '' : ` -p ${proto}`;
    const line = `-A ${from}${p} -m comment --comment ${cmt(set)} -m set --match-set ${name(set)}` +
      ` ${match} -j ${to}`;
    (table === 'filter' ? filter : nat).push(line);
  }
  if (!sets.isEmpty(KUBE_CLUSTER_IP)) {
    const head = `-A ${KUBE_SERVICES} -m comment --comment ${cmt(KUBE_CLUSTER_IP)}` +
      ` -m set --match-set ${name(KUBE_CLUSTER_IP)}`;
    const detector = buildLocalDetector(config.detectLocal);
    const notLocal = detector.ifNotLocal.join(' ');
    if (config.masqueradeAll) nat.push(`${head} dst,dst -j ${KUBE_MARK_MASQ}`);
    else if (detector.implemented) nat.push(`${head} dst,dst ${notLocal} -j ${KUBE_MARK_MASQ}`);
    else nat.push(`${head} src,dst -j ${KUBE_MARK_MASQ}`);
  }
  const externalIPRules = (args: string) => {
    nat.push(`${args} -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT`);
    nat.push(`${args} -m addrtype --dst-type LOCAL -j ACCEPT`);
  };
  for (const set of [KUBE_EXTERNAL_IP, KUBE_EXTERNAL_IP_LOCAL]) {
    if (sets.isEmpty(set)) continue;
    const args = `-A ${KUBE_SERVICES} -m comment --comment ${cmt(set)} -m set --match-set` +
      ` ${name(set)} dst,dst`;
    if (set === KUBE_EXTERNAL_IP) nat.push(`${args} -j ${KUBE_MARK_MASQ}`);
    externalIPRules(args);
  }
  nat.push(`-A ${KUBE_SERVICES} -m addrtype --dst-type LOCAL -j ${KUBE_NODE_PORT}`);
  nat.push(`-A ${KUBE_LOAD_BALANCER_CHAIN} -j ${KUBE_MARK_MASQ}`);
  filter.push(`-A ${KUBE_SOURCE_RANGES_FIREWALL} -j DROP`);
  for (const e of input.lbNoNodeAccess) {
    filter.push(`-A ${KUBE_IPVS_OUT_FILTER} -s ${e.ip} -m ipvs --vaddr ${e.ip} --vproto` +
      ` ${e.protocol} --vport ${e.port} -j DROP`);
  }
  for (const set of [KUBE_CLUSTER_IP, KUBE_LOAD_BALANCER]) {
    if (sets.isEmpty(set)) continue;
    nat.push(`-A ${KUBE_SERVICES} -m set --match-set ${name(set)} dst,dst -j ACCEPT`);
  }
  filter.push(...fixedFilterRules(name, mark));
  nat.push(`-A ${KUBE_POSTROUTING} -m mark ! --mark ${mark}/${mark} -j RETURN`);
  nat.push(`-A ${KUBE_POSTROUTING} -j MARK --xor-mark ${mark}`);
  const random = config.capabilities.randomFully ? ' --random-fully' : '';
  nat.push(`-A ${KUBE_POSTROUTING} -m comment --comment` +
    ` "kubernetes service traffic requiring SNAT" -j MASQUERADE${random}`);
  nat.push(`-A ${KUBE_MARK_MASQ} -j MARK --or-mark ${mark}`);
  const chains = (t: Table) => IPTABLES_CHAINS.filter((c) => c.table === t)
    .map((c) => `:${c.chain} - [0:0]`);
  return [
    '*nat', ...chains('nat'), ...nat, 'COMMIT',
    '*filter', ...chains('filter'), ...filter, 'COMMIT',
  ].join('\n') + '\n';
}

function fixedFilterRules(name: (base: string) => string, mark: string): string[] {
  const hc = name(KUBE_HEALTH_CHECK_NODE_PORT);
  const ret = (set: string, match: string) =>
    `-A ${KUBE_IPVS_FILTER} -m set --match-set ${name(set)} ${match} -j RETURN`;
  return [
    `-A ${KUBE_FORWARD} -m comment --comment "kubernetes forwarding rules" -m mark --mark` +
      ` ${mark}/${mark} -j ACCEPT`,
    `-A ${KUBE_FORWARD} -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack` +
      ' --ctstate RELATED,ESTABLISHED -j ACCEPT',
    `-A ${KUBE_NODE_PORT} -m comment --comment` +
      ` ${quoted(ipsetInfo(KUBE_HEALTH_CHECK_NODE_PORT).comment)} -m set --match-set ${hc}` +
      ' dst -j ACCEPT',
    ret(KUBE_LOAD_BALANCER, 'dst,dst'),
    ret(KUBE_CLUSTER_IP, 'dst,dst'),
    ret(KUBE_EXTERNAL_IP, 'dst,dst'),
    ret(KUBE_EXTERNAL_IP_LOCAL, 'dst,dst'),
    ret(KUBE_HEALTH_CHECK_NODE_PORT, 'dst'),
    `-A ${KUBE_IPVS_FILTER} -m conntrack --ctstate NEW -m set --match-set ${name(KUBE_IPVS_IPS)}` +
      ' dst -j REJECT',
  ];
}
