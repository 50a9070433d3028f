// Builds a live lab from its plan (lab-plan.ts) in network namespaces, with a prober in each,
// and applies a proxy mode's rules to its node. The host's own interfaces are never touched:
// every link is created inside a lab namespace (`ip -n NODE link add … peer … netns OTHER`).
//
// Addressing (no bridge ports, so no br_netfilter is needed: every pod packet is routed by the
// node and passes its netfilter hooks, as on a Calico-style node):
//   pod   eth0 = pod IP/32 (/128); default via 169.254.1.1 / fe80::1 (held, scope link, by the
//         node's end vpN), and the node routes the pod IP to vpN.
//   node  eth0 = node IPs/32 (/128) + 169.254.0.2 / fe80::1 (link scope), default via the world;
//         cni0 (a bridge without ports) holds the first address of each pod CIDR.
//   world eth0 = 169.254.0.1 / fe80::2, default via the node. AnyIP (`local 0/0 dev lo` in the
//         local table) delivers every packet arriving from the node, so one wildcard responder
//         answers for every address the node sends out (remote endpoints, untouched
//         destinations, other nodes); with ip_nonlocal_bind it sends from any source address,
//         and a rule ahead of the local table (`iif lo` → main) sends all it sends to the node.

import type { HostExec } from '../../host/exec.js';
import { deleteNetns, ipBatch } from '../../host/netns.js';
import { kernelRulesOf, proxyMode, type ProxyMode } from '../../proxy/registry.js';
import { isV6, type LabPlan, senderRole } from './lab-plan.js';
import {
  type ListenPort, type ProbeOutcome, type ProbeSpec, type Prober, startProber,
} from './prober.js';

/** A proxy mode with kernel commands (its registry entry's `kernel`). */
export type LabMode = ProxyMode;

export interface Lab {
  readonly plan: LabPlan;
  /** Sends the probe from whichever namespace owns `spec.source` (the world for strangers). */
  probe(spec: ProbeSpec & { source: string }): Promise<ProbeOutcome>;
  /** Replaces the node's whole ruleset with `text` (plus kube-proxy's jump rules for iptables)
   *  and flushes conntrack. */
  applyRules(mode: LabMode, text: string): Promise<void>;
  /** Forgets every connection of that family on the node (`conntrack -F`). */
  flushConntrack(family?: 'ipv4' | 'ipv6'): Promise<void>;
  /** Stops the probers and deletes every namespace of the lab; safe to call twice. */
  close(): Promise<void>;
}

const COMMON_SYSCTLS = [
  'net.ipv6.conf.all.accept_dad=0', 'net.ipv6.conf.default.accept_dad=0',
  'net.ipv4.conf.all.rp_filter=0', 'net.ipv4.conf.default.rp_filter=0',
];
const NODE_SYSCTLS = [
  'net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1',
  'net.ipv4.conf.all.send_redirects=0', 'net.ipv4.conf.default.send_redirects=0',
];
const WORLD_SYSCTLS = ['net.ipv4.ip_nonlocal_bind=1', 'net.ipv6.ip_nonlocal_bind=1'];

function sysctl(exec: HostExec, netns: string, pairs: readonly string[]): Promise<unknown> {
  return exec.run('sysctl', ['-q', '-w', ...pairs], { netns });
}

const host = (ip: string) => (isV6(ip) ? `${ip}/128` : `${ip}/32`);
// `ip -batch` lines take no global options (no `-6`): the family comes from the addresses.
const addr = (ip: string, dev: string) =>
  `addr add ${ip.includes('/') ? ip : host(ip)} dev ${dev}${isV6(ip) ? ' nodad' : ''}`;

function nodeLines(plan: LabPlan): string[] {
  const lines = ['link add cni0 type bridge', 'link set cni0 up', 'link set eth0 up'];
  for (const ip of plan.nodeIPs) lines.push(addr(ip, 'eth0'));
  lines.push('addr add 169.254.0.2/32 dev eth0 scope link', 'addr add fe80::1/64 dev eth0 nodad');
  plan.podCIDRs.forEach((cidr, i) => {
    lines.push(addr(`${plan.gateways[i]}/${cidr.split('/')[1]}`, 'cni0'));
  });
  plan.pods.forEach((pod, i) => {
    lines.push(`link set vp${i} up`, `addr add 169.254.1.1/32 dev vp${i} scope link`,
      `addr add fe80::1/64 dev vp${i} nodad`);
    for (const ip of pod.ips) lines.push(`route add ${host(ip)} dev vp${i}`);
  });
  lines.push('route add 169.254.0.1/32 dev eth0 scope link',
    'route add default via 169.254.0.1 dev eth0', 'route add ::/0 via fe80::2 dev eth0');
  return lines;
}

// The world's AnyIP routes sit in the local table, so any source address passes the output
// route's source check and any destination arriving from the node is delivered; the rule for
// locally generated packets (`iif lo` → main) is moved ahead of the local table so whatever the
// world sends, even to an address it also serves, goes to the node.
const WORLD_LINES = [
  'link set eth0 up', 'addr add 169.254.0.1/32 dev eth0 scope link',
  'addr add fe80::2/64 dev eth0 nodad',
  'route add 169.254.0.2/32 dev eth0 scope link', 'route add default via 169.254.0.2 dev eth0',
  'route add ::/0 via fe80::1 dev eth0',
  'route add local 0.0.0.0/0 dev lo table local', 'route add local ::/0 dev lo table local',
];
/** Rules name no address to tell their family by: a batch per family (`ip -4|-6 -batch`). */
const WORLD_RULES = [
  'rule add iif lo lookup main pref 100', 'rule add lookup local pref 300', 'rule del pref 0',
];

function familyBatch(exec: HostExec, netns: string, family: '-4' | '-6', lines: readonly string[]) {
  return exec.run('ip', ['-n', netns, family, '-batch', '-'], { input: `${lines.join('\n')}\n` });
}

function podLines(ips: readonly string[]): string[] {
  return ['link set eth0 up', ...ips.map((ip) => addr(ip, 'eth0')),
    'route add 169.254.1.1/32 dev eth0 scope link', 'route add default via 169.254.1.1 dev eth0',
    'route add ::/0 via fe80::1 dev eth0'];
}

function listenPorts(plan: LabPlan, addresses: readonly string[]): ListenPort[] {
  const ports: ListenPort[] = plan.tcpPorts.map((port) => ({ port, protocol: 'tcp' }));
  for (const port of plan.udpPorts) {
    ports.push({ port, protocol: 'udp' });
    for (const address of addresses) ports.push({ port, protocol: 'udp', address });
  }
  return ports;
}

/** Builds the lab; on any failure removes what it made and rethrows. */
export async function buildLab(exec: HostExec, plan: LabPlan): Promise<Lab> {
  const all = [plan.nodeNetns, plan.worldNetns, ...plan.pods.map((p) => p.netns)];
  const probers = new Map<string, Prober>();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.allSettled([...probers.values()].map((p) => p.close()));
    await Promise.allSettled(all.map((ns) => deleteNetns(exec, ns)));
  };
  const nodeAddrs = [...plan.nodeIPs, ...plan.gateways, '127.0.0.1', '::1'];
  const roles: Array<[string, string, readonly string[]]> = [
    ['node', plan.nodeNetns, nodeAddrs],
    ['world', plan.worldNetns, plan.worldAddresses],
    ...plan.pods.map((p): [string, string, readonly string[]] => [p.role, p.netns, p.ips]),
  ];
  const sysctls = (ns: string) => [...COMMON_SYSCTLS,
    ...(ns === plan.nodeNetns ? NODE_SYSCTLS : ns === plan.worldNetns ? WORLD_SYSCTLS : [])];
  try {
    await Promise.all(all.map((ns) => exec.run('ip', ['netns', 'add', ns])));
    // Node takes ~0.1 s (much more on a busy machine) to start: the probers start while the
    // links are made, and listen once the addresses exist.
    const starting = Promise.all(roles.map(async ([role, ns]) => {
      probers.set(role, await startProber(ns, { name: role }));
    }));
    const wiring = (async () => {
      await Promise.all(all.map((ns) => sysctl(exec, ns, sysctls(ns))));
      await ipBatch(exec, plan.nodeNetns, [
        `link add eth0 type veth peer name eth0 netns ${plan.worldNetns}`,
        ...plan.pods.map((p, i) => `link add vp${i} type veth peer name eth0 netns ${p.netns}`),
      ]);
      await Promise.all([
        ipBatch(exec, plan.nodeNetns, ['link set lo up', ...nodeLines(plan)]),
        familyBatch(exec, plan.worldNetns, '-4', WORLD_RULES)
          .then(() => familyBatch(exec, plan.worldNetns, '-6', WORLD_RULES))
          .then(() => ipBatch(exec, plan.worldNetns, ['link set lo up', ...WORLD_LINES])),
        ...plan.pods.map((p) => ipBatch(exec, p.netns, ['link set lo up', ...podLines(p.ips)])),
      ]);
    })();
    const [started, wired] = await Promise.allSettled([starting, wiring]);
    for (const r of [started, wired]) if (r.status === 'rejected') throw r.reason;
    await Promise.all(roles.map(([role, , addrs]) =>
      probers.get(role)!.listen(listenPorts(plan, addrs))));
  } catch (e) {
    await close();
    throw e;
  }
  const flushConntrack = async (family?: 'ipv4' | 'ipv6') => {
    for (const f of family ? [family] : ['ipv4', 'ipv6']) {
      await exec.run('conntrack', ['-F', '-f', f], { netns: plan.nodeNetns });
    }
  };
  return {
    plan,
    probe(spec) {
      return probers.get(senderRole(plan, spec.source))!.probe(spec);
    },
    async applyRules(mode, text) {
      const ns = plan.nodeNetns;
      await exec.run('nft', ['flush', 'ruleset'], { netns: ns });
      // kube-proxy's iptables mode turns route_localnet on for localhost node ports.
      await sysctl(exec, ns, [`net.ipv4.conf.all.route_localnet=${proxyMode(mode).routeLocalnet ? 1 : 0}`]);
      await kernelRulesOf(mode).load(exec, ns, plan.nodeIPs.some(isV6) ? 'IPv6' : 'IPv4', text);
      await flushConntrack();
    },
    flushConntrack,
    close,
  };
}
