// Semantic facts of an nftables ruleset in kube-proxy's layout (reference §6): chain names are
// readable (`service-HASH-ns/name/proto/port`, `endpoint-…__ip/port`), so the Service port of
// a chain, set element or rule is read from its name or comment. Unrecognised rules and
// elements become generic facts, grouped by the Service they name (or none).

import type { RuleOrigin } from '../proxy/backend.js';
import type { NftChain, NftRuleset, NftSet } from '../ruleset/nftables/model.js';
import { originFromNftChain } from '../trace/nftables/filter.js';
import { addTarget, formatProbability, lowerProto, setFact } from './facts-util.js';
import type { FactTable } from './types.js';

type OriginOf = (chain: string) => RuleOrigin | undefined;

const protoSuffix = (p: string) => (p === 'tcp' ? '' : `/${p}`);
const hostPort = (ip: string, port: string) =>
  (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

export function nftablesFacts(rs: NftRuleset, facts: FactTable,
  origins?: ReadonlyMap<string, RuleOrigin>): void {
  const originOf: OriginOf = (c) => {
    const o = origins?.get(c) ?? originFromNftChain(c);
    if (!o?.servicePort) return undefined;
    return { servicePort: o.servicePort, endpoint: o.endpoint && ipv6Endpoint(o.endpoint) };
  };
  for (const t of rs.tables.values()) {
    const where = `${t.family} ${t.name}`;
    const clusterIPs = new Set(t.sets.get('cluster-ips')?.elements.keys() ?? []);
    for (const c of t.chains.values()) chainFacts(where, c, originOf, facts);
    for (const s of t.sets.values()) setFacts(where, s, clusterIPs, originOf, facts);
  }
}

/**
 * Endpoint chain names spell an IPv6 address with dots for colons (upstream replaces them):
 * `fd00.10.244..5:8080` → `[fd00:10:244::5]:8080`.
 */
function ipv6Endpoint(ep: string): string {
  const m = /^([0-9a-fA-F.]+):(\d+)$/.exec(ep);
  if (!m || m[1]!.split('.').length <= 4) return ep;
  return `[${m[1]!.replace(/\./g, ':')}]:${m[2]}`;
}

function targetChain(tokens: readonly string[]): string | undefined {
  const i = tokens.findIndex((x) => x === 'goto' || x === 'jump');
  return i >= 0 ? tokens[i + 1]?.replace(/,$/, '') : undefined;
}

function chainFacts(where: string, c: NftChain, originOf: OriginOf, facts: FactTable): void {
  const o = originOf(c.name);
  const kind = /^([a-z]+)-/.exec(c.name)?.[1];
  if (!o) {
    for (const r of c.rules) {
      const g = originOf(targetChain(r.tokens) ?? '')?.servicePort ?? '';
      setFact(facts, g, `rule ${where} ${c.name}: ${ruleText(r.tokens, r.comment)}`);
    }
    return;
  }
  let local = false;
  for (const r of c.rules) {
    const text = r.tokens.join(' ');
    const target = targetChain(r.tokens) ?? '';
    if ((kind === 'service' || kind === 'local') && r.tokens.includes('numgen')) {
      endpoints(r.tokens, o, originOf, facts, kind === 'local' ? 'local endpoint' : 'endpoint');
    } else if (kind === 'service' && target === 'mark-for-masquerade') {
      const m = /saddr != (\S+)/.exec(text);
      const what = m ? `traffic from outside ${m[1]}` : 'all traffic';
      setFact(facts, o.servicePort, `masquerade for ${what} to the service address`);
    } else if (kind === 'external' && text === 'jump mark-for-masquerade') {
      setFact(facts, o.servicePort, 'masquerade for external traffic');
    } else if (kind === 'external' && (text.startsWith('goto service-') ||
      text.startsWith('goto local-'))) {
      local ||= target.startsWith('local-');
    } else if (kind === 'firewall' && /^ip6? saddr != /.test(text) && text.endsWith(' drop')) {
      for (const cidr of setWords(r.tokens.slice(3, -1))) {
        setFact(facts, o.servicePort, `source range ${cidr}`);
      }
    } else if (kind === 'endpoint' && standardEndpointRule(text, o)) {
      continue;
    } else {
      setFact(facts, o.servicePort, `rule ${kind}: ${ruleText(r.tokens, r.comment)}`);
    }
  }
  if (kind === 'external') {
    setFact(facts, o.servicePort, 'external traffic policy', local ? 'Local' : 'Cluster');
  }
}

function ruleText(tokens: readonly string[], comment?: string): string {
  return tokens.join(' ') + (comment ? ` comment ${JSON.stringify(comment)}` : '');
}

/** The words of `{ a , b }` or a single word. */
function setWords(tokens: readonly string[]): string[] {
  return tokens.map((x) => x.replace(/,$/, '')).filter((x) => x !== '{' && x !== '}' && x !== '');
}

function standardEndpointRule(text: string, o: RuleOrigin): boolean {
  if (!o.endpoint) return false;
  const ip = o.endpoint.replace(/^\[?([^\]]*?)\]?:\d+$/, '$1');
  return /^ip6? saddr \S+ jump mark-for-masquerade$/.test(text) && text.includes(` ${ip} `) ||
    /^meta l4proto \S+ dnat (ip6? )?to \S+$/.test(text) && text.endsWith(` ${o.endpoint}`);
}

/** `numgen random mod N vmap { 0 : goto A , 1 : goto B }`: each endpoint 1/N. */
function endpoints(tokens: readonly string[], o: RuleOrigin, originOf: OriginOf,
  facts: FactTable, label: string): void {
  const targets = tokens.filter((_, i) => tokens[i - 1] === 'goto' || tokens[i - 1] === 'jump')
    .map((t) => t.replace(/,$/, ''));
  for (const t of targets) {
    const ep = originOf(t)?.endpoint ?? t;
    setFact(facts, o.servicePort, `${label} ${ep}`,
      `probability ${formatProbability(1 / targets.length)}`);
  }
}

function setFacts(where: string, s: NftSet, clusterIPs: ReadonlySet<string>, originOf: OriginOf,
  facts: FactTable): void {
  for (const e of s.elements.values()) {
    const target = e.value ? targetChain(e.value.join(' ').split(/\s+/)) : undefined;
    const group = (target && originOf(target)?.servicePort) ??
      (/^[^/\s]+\/[^/\s]+$/.test(e.comment ?? '') ? e.comment! : '');
    if (addressFact(s.name, e.key, clusterIPs, group, facts)) continue;
    if (s.name === 'cluster-ips') continue;
    const value = e.value ? ` : ${e.value.join(' ')}` : '';
    setFact(facts, group, `element ${where} ${s.name}: ${e.key.join(' . ')}${value}`);
  }
}

function addressFact(set: string, key: readonly string[], clusterIPs: ReadonlySet<string>,
  group: string, facts: FactTable): boolean {
  if (set === 'service-ips' && key.length === 3) {
    const [ip, p, port] = key as [string, string, string];
    const proto = lowerProto(p);
    if (!proto) return false;
    const cluster = clusterIPs.has(ip);
    const label = cluster ? 'ClusterIP' : 'external or LoadBalancer IP';
    setFact(facts, group, `${label} ${hostPort(ip, port)}${protoSuffix(proto)}`);
    addTarget(facts, { kind: cluster ? 'cluster' : 'external', ip, port: Number(port), proto });
    return true;
  }
  if (set === 'service-nodeports' && key.length === 2) {
    const proto = lowerProto(key[0]);
    if (!proto) return false;
    setFact(facts, group, `NodePort ${key[1]}${protoSuffix(proto)}`);
    addTarget(facts, { kind: 'nodeport', ip: '', port: Number(key[1]), proto });
    return true;
  }
  if ((set === 'no-endpoint-services' || set === 'firewall-ips') && key.length === 3) {
    const proto = lowerProto(key[1]);
    if (proto) addTarget(facts, { kind: 'cluster', ip: key[0]!, port: Number(key[2]), proto });
  }
  if (set === 'no-endpoint-nodeports' && key.length === 2) {
    const proto = lowerProto(key[0]);
    if (proto) addTarget(facts, { kind: 'nodeport', ip: '', port: Number(key[1]), proto });
  }
  return false;
}
