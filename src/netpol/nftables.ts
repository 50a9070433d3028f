// NetworkPolicy → one `table inet kdp-netpol` per node, as an `nft -f` transaction (full
// rewrite: add, delete, re-add the table, so one atomic apply replaces the previous state).
//
// Shape (the fast CNIs' layout, keyed by pod IP):
// - chain `forward` (filter hook forward): `ct state established,related accept` first, so
//   replies of allowed connections always pass; then `ip saddr vmap @egress-pods-v4` and
//   `ip daddr vmap @ingress-pods-v4` (and ip6 twins) jump to the per-pod chains of the node's
//   own pods that are isolated in that direction. Packets of pods no policy isolates hit no map
//   entry and pass (policy accept).
// - per-pod chains `ingress-<ns>/<pod>`, `egress-<ns>/<pod>`: one `return` rule per allowed
//   (peer set × port) of every selecting policy's rules, in policy (ns/name) then rule order,
//   then `drop`. `return` (not accept) so an allowed egress still meets the destination's
//   ingress chain. Ingress chains first allow the node's own IPs (set `node-ips-v4`).
// - named sets `peers-<ns>/<policy>/<ingress|egress>-<i>-v4` of peer addresses (pod IPs and
//   ipBlock cidr minus except, merged into disjoint intervals), shared by every pod the policy
//   selects, so a controller can keep them in step with pods and namespaces by element.
// - named ports: on ingress resolved against the selected pod; on egress against each
//   destination pod (an anonymous set of the destination IPs per resolved number).
// Deterministic: pods, policies, elements sorted; the same input gives byte-identical text.

import type { IPFamily } from '../api/net.js';
import { ipFamilyOf, parseIP } from '../api/net.js';
import { isolating, peerMatches, selects } from './evaluate.js';
import type { NetpolModel, PodInfo } from './model.js';
import { podKey, policyKey } from './model.js';
import { RangeSet } from './ip-ranges.js';
import type { NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort, PolicyType } from './types.js';

export const NETPOL_TABLE = 'kdp-netpol';
const T = `inet ${NETPOL_TABLE}`;

export type Fam = { readonly f: IPFamily; readonly sfx: 'v4' | 'v6'; readonly kw: 'ip' | 'ip6';
  readonly type: string };
const V4: Fam = { f: 'IPv4', sfx: 'v4', kw: 'ip', type: 'ipv4_addr' };
const V6: Fam = { f: 'IPv6', sfx: 'v6', kw: 'ip6', type: 'ipv6_addr' };

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const clip = (s: string): string => (Buffer.byteLength(s) <= 128 ? s : `${s.slice(0, 125)}...`);
const q = (s: string): string => `"${clip(s).replace(/"/g, "'")}"`;

export interface NetpolCompileOptions {
  /** The node whose pods are enforced here. */
  readonly node: string;
}

// Family bits (1 IPv4, 2 IPv6) per pod and per policy object, computed once per object: a node
// agent compiles on every change from mostly the same objects.
const podFams = new WeakMap<PodInfo, number>();
const policyFams = new WeakMap<NetworkPolicy, number>();
const bit = (addr: string): number => (addr.includes(':') ? 2 : 1);

/** Which families the cluster uses (pod IPs and ipBlocks); IPv4 when none. */
export function familiesOf(m: NetpolModel): Fam[] {
  let seen = 0;
  for (const p of m.pods) {
    let b = podFams.get(p);
    if (b === undefined) podFams.set(p, (b = p.ips.reduce((a, ip) => a | bit(ip), 0)));
    seen |= b;
  }
  for (const np of m.policies) {
    let b = policyFams.get(np);
    if (b === undefined) {
      b = 0;
      for (const r of [...(np.spec.ingress ?? []).flatMap((x) => x.from ?? []),
        ...(np.spec.egress ?? []).flatMap((x) => x.to ?? [])]) {
        if (r.ipBlock) b |= bit(r.ipBlock.cidr);
      }
      policyFams.set(np, b);
    }
    seen |= b;
  }
  const out = [V4, V6].filter((x) => (seen & (x === V4 ? 1 : 2)) !== 0);
  return out.length ? out : [V4];
}

const rulesOf = (np: NetworkPolicy, t: PolicyType): Array<{ ports?: NetworkPolicyPort[];
  peers?: NetworkPolicyPeer[] }> => (t === 'Ingress'
  ? (np.spec.ingress ?? []).map((r) => ({ ports: r.ports, peers: r.from }))
  : (np.spec.egress ?? []).map((r) => ({ ports: r.ports, peers: r.to })));

const dirName = (t: PolicyType): string => t.toLowerCase();
const setName = (np: NetworkPolicy, t: PolicyType, i: number, fam: Fam): string =>
  `peers-${policyKey(np)}/${dirName(t)}-${i}-${fam.sfx}`;

// Pod IPs parsed once per pod object (models are rebuilt per change from the same PodInfos).
const parsedIPs = new WeakMap<PodInfo, ReturnType<typeof parseIP>[]>();
export function addPodIPs(s: RangeSet, pod: PodInfo): void {
  let ps = parsedIPs.get(pod);
  if (!ps) parsedIPs.set(pod, (ps = pod.ips.map(parseIP)));
  for (const p of ps) if (p) s.addParsed(p);
}

/** Peer addresses of one rule (undefined peers = everyone: no set). */
export function peerSet(m: NetpolModel, np: NetworkPolicy, peers: NetworkPolicyPeer[]): RangeSet {
  const s = new RangeSet();
  const ns = np.metadata.namespace ?? 'default';
  for (const peer of peers) {
    if (peer.ipBlock) { s.addBlock(peer.ipBlock); continue; }
    for (const pod of m.pods) {
      if (peerMatches(m, peer, ns, { pod })) addPodIPs(s, pod);
    }
  }
  return s;
}

const proto = (p: NetworkPolicyPort): string => (p.protocol ?? 'TCP').toLowerCase();

/** Port match for numeric / protocol-only entries; undefined for named ports. */
function numericMatch(p: NetworkPolicyPort): string | undefined {
  if (typeof p.port === 'string') return undefined;
  if (p.port === undefined) return `meta l4proto ${proto(p)}`;
  const range = p.endPort !== undefined && p.endPort !== p.port ? `${p.port}-${p.endPort}`
    : String(p.port);
  return `meta l4proto ${proto(p)} th dport ${range}`;
}

function namedPort(pod: PodInfo, p: NetworkPolicyPort): number | undefined {
  const want = (p.protocol ?? 'TCP');
  return pod.ports.find((x) => x.name === p.port && x.protocol === want)?.port;
}

/** A named peer set a chain's rule matches: rule `rule` of `np`'s `t` rules, for `fam`. */
export interface SetUse {
  readonly name: string;
  readonly fam: Fam;
  readonly np: NetworkPolicy;
  readonly peers: NetworkPolicyPeer[];
}

/** One isolated pod's chain in one direction: its name, rule lines and what they depend on. */
export interface PodChain {
  readonly name: string;
  readonly rules: string[];
  /** Sets its rules match, by name (each once). */
  readonly sets: Map<string, SetUse>;
  /** It has egress named-port rules: their addresses depend on every pod and namespace. */
  readonly everyPod: boolean;
}

export const chainName = (pod: PodInfo, t: PolicyType): string => `${dirName(t)}-${podKey(pod)}`;

/**
 * The chain of `pod` for direction `t`, isolated by `pols` (sorted by policy key). Set contents
 * are not computed here (`sets` names them; `setElements` fills them), so a caller can keep them.
 */
export function podChain(m: NetpolModel, pod: PodInfo, t: PolicyType, pols: readonly NetworkPolicy[],
  fams: readonly Fam[], nodeIPs: boolean): PodChain {
  const chain = chainName(pod, t);
  const out: PodChain = { name: chain, rules: [], sets: new Map(), everyPod: false };
  const add = (body: string, comment: string): void => {
    out.rules.push(`add rule ${T} ${chain} ${body} comment ${q(comment)}`);
  };
  const addr = t === 'Ingress' ? 'saddr' : 'daddr';
  if (t === 'Ingress' && nodeIPs) {
    for (const fam of fams) add(`${fam.kw} saddr @node-ips-${fam.sfx} return`, "from the pod's node");
  }
  for (const np of pols) {
    rulesOf(np, t).forEach((r, i) => {
      const note = `${policyKey(np)} ${dirName(t)} rule ${i}`;
      const hasPeers = (r.peers ?? []).length > 0;
      const peerMatch = (fam: Fam): string => {
        if (!hasPeers) return '';
        const name = setName(np, t, i, fam);
        if (!out.sets.has(name)) out.sets.set(name, { name, fam, np, peers: r.peers! });
        return `${fam.kw} ${addr} @${name} `;
      };
      const peerFams = hasPeers ? fams : [undefined];
      const ports = r.ports ?? [];
      if (ports.length === 0) {
        for (const fam of peerFams) add(`${fam ? peerMatch(fam) : ''}return`, note);
        return;
      }
      for (const p of ports) {
        const num = numericMatch(p);
        if (num !== undefined) {
          for (const fam of peerFams) add(`${fam ? peerMatch(fam) : ''}${num} return`, note);
        } else if (t === 'Ingress') {
          const n = namedPort(pod, p);
          if (n === undefined) continue;
          for (const fam of peerFams) {
            add(`${fam ? peerMatch(fam) : ''}meta l4proto ${proto(p)} th dport ${n} return`, note);
          }
        } else {
          (out as { everyPod: boolean }).everyPod = true;
          egressNamed(m, np, r.peers, p, fams, (body) => add(body, note));
        }
      }
    });
  }
  add('drop', isolationNote(pod, t, pols.map(policyKey)));
  return out;
}

/** The elements of a set a chain uses. */
export const setElements = (m: NetpolModel, u: SetUse): string[] =>
  peerSet(m, u.np, u.peers).elements(u.fam.f);

/** Policies isolating `pod` for `t`, sorted by policy key (the order of a chain's rules). */
export const isolatingSorted = (m: NetpolModel, pod: PodInfo, t: PolicyType): NetworkPolicy[] =>
  isolating(m, pod, t).sort((a, b) => byName(policyKey(a), policyKey(b)));

/**
 * The drop rule's comment: `<pod> isolated for <direction> by <policies>`, naming as many of the
 * isolating policies as fit nft's 128-byte comment (then `+N more`), so a tracer can say which
 * policies a default-deny drop comes from. Read back by `parseIsolationNote`.
 */
export function isolationNote(pod: PodInfo, t: PolicyType, policies: readonly string[]): string {
  const head = `${podKey(pod)} isolated for ${dirName(t)} by `;
  let names = '';
  for (let i = 0; i < policies.length; i++) {
    const next = `${names}${i ? ', ' : ''}${policies[i]}`;
    const more = i + 1 < policies.length ? `, +${policies.length - i - 1} more` : '';
    if (Buffer.byteLength(head + next + more) > 120) {
      names = `${names}${names ? ', ' : ''}+${policies.length - i} more`;
      break;
    }
    names = next;
  }
  return head + names;
}

/** `x/a isolated for ingress by x/deny, x/other` → its parts (undefined for other comments). */
export function parseIsolationNote(comment: string)
  : { pod: string; direction: 'ingress' | 'egress'; policies: string[] } | undefined {
  const m = /^(\S+) isolated for (ingress|egress)(?: by (.*))?$/.exec(comment);
  if (!m) return undefined;
  return { pod: m[1]!, direction: m[2] as 'ingress' | 'egress',
    policies: m[3] ? m[3].split(', ') : [] };
}

/** Egress to a named port: per resolved number, the destination pods' IPs that match peers. */
function egressNamed(m: NetpolModel, np: NetworkPolicy, peers: NetworkPolicyPeer[] | undefined,
  p: NetworkPolicyPort, fams: readonly Fam[], add: (body: string) => void): void {
  const ns = np.metadata.namespace ?? 'default';
  const byPort = new Map<number, RangeSet>();
  for (const dst of m.pods) {
    const n = namedPort(dst, p);
    if (n === undefined) continue;
    if (peers && peers.length > 0 && !peers.some((x) => peerMatches(m, x, ns, { pod: dst }))) {
      continue;
    }
    if (!byPort.has(n)) byPort.set(n, new RangeSet());
    addPodIPs(byPort.get(n)!, dst);
  }
  for (const n of [...byPort.keys()].sort((a, b) => a - b)) {
    for (const fam of fams) {
      const el = byPort.get(n)!.elements(fam.f);
      if (el.length) add(`${fam.kw} daddr { ${el.join(', ')} } meta l4proto ${proto(p)} th dport ${n} return`);
    }
  }
}

/** The node's own pods with addresses, sorted by key (the order of chains and map elements). */
export const localPods = (m: NetpolModel, node: string): PodInfo[] =>
  m.pods.filter((p) => p.node === node && p.ips.length > 0).sort((a, b) => byName(podKey(a), podKey(b)));

/** Everything a node's table is made of, in output order (chains: egress then ingress, by pod). */
export interface TableParts {
  readonly node: string;
  readonly fams: readonly Fam[];
  readonly nodeIPs: readonly string[];
  /** Per direction, the isolated local pods with their chains. */
  readonly chains: ReadonlyArray<{ readonly pod: PodInfo; readonly t: PolicyType; readonly chain: PodChain }>;
  /** Elements of every set some chain uses. */
  readonly sets: ReadonlyMap<string, { readonly fam: Fam; readonly elems: readonly string[] }>;
}

/** The `nft -f` text of a node's table (a full rewrite). */
export function renderTable(p: TableParts): string {
  const maps: Record<string, string[]> = {};
  for (const t of ['Egress', 'Ingress'] as const) for (const fam of p.fams) maps[`${dirName(t)}-pods-${fam.sfx}`] = [];
  for (const { pod, t, chain } of p.chains) {
    for (const ip of pod.ips) {
      const fam = ipFamilyOf(ip) === 'IPv6' ? V6 : V4;
      maps[`${dirName(t)}-pods-${fam.sfx}`]?.push(`${ip} : jump ${chain.name}`);
    }
  }
  const comment = q(`kdp NetworkPolicy enforcement on node ${p.node}`);
  const lines = [
    `add table ${T} { comment ${comment} ; }`,
    `delete table ${T}`,
    `add table ${T} { comment ${comment} ; }`,
    `add chain ${T} forward { type filter hook forward priority filter ; policy accept ; }`,
    // Chains before the maps whose verdicts jump to them.
    ...p.chains.map((c) => `add chain ${T} ${c.chain.name}`),
  ];
  for (const fam of p.fams) {
    lines.push(`add set ${T} node-ips-${fam.sfx} { type ${fam.type} ; }`);
    const el = p.nodeIPs.filter((ip) => (ipFamilyOf(ip) ?? 'IPv4') === fam.f).sort(byName);
    if (el.length) lines.push(`add element ${T} node-ips-${fam.sfx} { ${el.join(', ')} }`);
  }
  for (const name of Object.keys(maps).sort(byName)) {
    const fam = name.endsWith('v6') ? V6 : V4;
    lines.push(`add map ${T} ${name} { type ${fam.type} : verdict ; }`);
    if (maps[name]!.length) lines.push(`add element ${T} ${name} { ${maps[name]!.join(', ')} }`);
  }
  for (const name of [...p.sets.keys()].sort(byName)) {
    const s = p.sets.get(name)!;
    lines.push(`add set ${T} ${name} { type ${s.fam.type} ; flags interval ; }`);
    if (s.elems.length) lines.push(`add element ${T} ${name} { ${s.elems.join(', ')} }`);
  }
  lines.push(`add rule ${T} forward ct state established,related accept`);
  for (const t of ['egress', 'ingress']) {
    const addr = t === 'egress' ? 'saddr' : 'daddr';
    for (const fam of p.fams) lines.push(`add rule ${T} forward ${fam.kw} ${addr} vmap @${t}-pods-${fam.sfx}`);
  }
  for (const c of p.chains) lines.push(...c.chain.rules);
  return `${lines.join('\n')}\n`;
}

/**
 * Compiles the node's table from scratch; `nodeIPs` come from the model (`nodeIPs.get(node)`).
 * A node agent keeps a `NodeCompiler` (node-compiler.ts) instead, which gives the same text.
 */
export function compileNetpolNftables(m: NetpolModel, opts: NetpolCompileOptions): string {
  const fams = familiesOf(m);
  const nodeIPs = m.nodeIPs.get(opts.node) ?? [];
  const chains: Array<{ pod: PodInfo; t: PolicyType; chain: PodChain }> = [];
  const sets = new Map<string, { fam: Fam; elems: string[] }>();
  for (const t of ['Egress', 'Ingress'] as const) {
    for (const pod of localPods(m, opts.node)) {
      const pols = isolatingSorted(m, pod, t);
      if (pols.length === 0) continue;
      const chain = podChain(m, pod, t, pols, fams, nodeIPs.length > 0);
      for (const u of chain.sets.values()) {
        if (!sets.has(u.name)) sets.set(u.name, { fam: u.fam, elems: setElements(m, u) });
      }
      chains.push({ pod, t, chain });
    }
  }
  return renderTable({ node: opts.node, fams, nodeIPs, chains, sets });
}
