// Semantic facts of an iptables table (kube-proxy's layout, reference §5): per Service port its
// addresses, NodePorts, endpoints with their effective probabilities, masquerade rules, traffic
// policy and source ranges; every other rule becomes a `table chain: rule` fact with hashed
// names replaced by readable aliases, grouped by the Service it names (or none).

import type { RuleOrigin } from '../proxy/backend.js';
import { formatArgs } from '../ruleset/iptables/format.js';
import type { IptablesChain, IptablesTable } from '../ruleset/iptables/model.js';
import { addTarget, formatProbability, lowerProto, setFact } from './facts-util.js';
import { argAfter, chainAlias, commentOf, resolveChainOrigins, serviceOfComment } from
  './iptables-names.js';
import type { FactTable, ProbeTarget } from './types.js';

type Origins = ReadonlyMap<string, RuleOrigin>;

const ADDRESS_KINDS: Record<string, ProbeTarget['kind']> = {
  'cluster IP': 'cluster', 'external IP': 'external', 'loadbalancer IP': 'loadbalancer',
};
const KIND_LABEL: Record<ProbeTarget['kind'], string> = {
  cluster: 'ClusterIP', external: 'external IP', loadbalancer: 'LoadBalancer IP',
  nodeport: 'NodePort',
};

const protoSuffix = (p: string) => (p === 'tcp' ? '' : `/${p}`);

export function iptablesFacts(tables: readonly IptablesTable[], facts: FactTable,
  given?: Origins, prefix = ''): void {
  const origins = resolveChainOrigins(tables, given);
  for (const t of tables) {
    for (const c of t.chains) {
      if (c.deleted) continue;
      const o = origins.get(c.name);
      if (o && c.name.startsWith('KUBE-SVC-')) endpointFacts(c, o, origins, facts, 'endpoint');
      else if (o && c.name.startsWith('KUBE-SVL-')) {
        endpointFacts(c, o, origins, facts, 'local endpoint');
      } else if (o && c.name.startsWith('KUBE-EXT-')) extFacts(c, o, origins, facts, prefix);
      else ruleFacts(t.name, c, origins, facts, prefix);
    }
  }
}

function groupOf(c: IptablesChain, args: readonly string[], origins: Origins): string {
  const own = origins.get(c.name)?.servicePort;
  if (own) return own;
  const sp = serviceOfComment(commentOf(args));
  if (sp) return sp;
  const target = argAfter(args, '-j') ?? argAfter(args, '-g');
  return (target && origins.get(target)?.servicePort) ?? '';
}

function aliasArgs(args: readonly string[], origins: Origins): string {
  const out = args.map((a) => chainAlias(a, origins));
  const i = out.indexOf('--comment');
  if (i >= 0 && out[i - 2] === '-m' && out[i - 1] === 'comment') out.splice(i - 2, 4);
  else if (i >= 0) out.splice(i, 2);
  return out.length ? formatArgs(out) : `(only a comment) ${JSON.stringify(args[i + 1] ?? '')}`;
}

function endpointFacts(c: IptablesChain, o: RuleOrigin, origins: Origins, facts: FactTable,
  label: string): void {
  let remaining = 1;
  const shares: [string, number][] = [];
  for (const r of c.rules) {
    const target = argAfter(r.args, '-j');
    const ep = target ? origins.get(target)?.endpoint : undefined;
    if (!target?.startsWith('KUBE-SEP-') || !ep) {
      if (!svcMasq(c, r.args, o.servicePort, facts)) {
        otherRule(o.servicePort, `nat ${chainAlias(c.name, origins)}`, r.args, origins, facts);
      }
      continue;
    }
    const p = Number(argAfter(r.args, '--probability') ?? '1');
    shares.push([ep, remaining * p]);
    remaining *= 1 - p;
  }
  for (const [ep, share] of shares) {
    setFact(facts, o.servicePort, `${label} ${ep}`,
      `probability ${formatProbability(snap(share, shares.length))}`);
  }
}

/** Written probabilities carry 10 decimals; snap their product back to the k/n it stands for. */
function snap(p: number, n: number): number {
  const k = Math.round(p * n);
  return Math.abs(p - k / n) < 1e-8 ? k / n : p;
}

function extFacts(c: IptablesChain, o: RuleOrigin, origins: Origins, facts: FactTable,
  prefix: string): void {
  let local = false;
  for (const r of c.rules) {
    const target = argAfter(r.args, '-j') ?? '';
    const plain = !r.args.includes('-s') && !r.args.includes('--src-type');
    if (target.startsWith('KUBE-SVL-')) local = true;
    if (target === 'KUBE-MARK-MASQ' && plain) {
      setFact(facts, o.servicePort, 'masquerade for external traffic');
    } else if (!(target.startsWith('KUBE-SVC-') && plain) && !target.startsWith('KUBE-SVL-')) {
      otherRule(o.servicePort, `${prefix}nat KUBE-EXT`, r.args, origins, facts);
    }
  }
  setFact(facts, o.servicePort, 'external traffic policy', local ? 'Local' : 'Cluster');
}

function otherRule(group: string, where: string, args: readonly string[], origins: Origins,
  facts: FactTable): void {
  setFact(facts, group, `rule ${where}: ${aliasArgs(args, origins)}`);
}

function ruleFacts(table: string, c: IptablesChain, origins: Origins, facts: FactTable,
  prefix: string): void {
  const own = origins.get(c.name);
  for (const r of c.rules) {
    const group = groupOf(c, r.args, origins);
    if (table === 'filter') filterTarget(c.name, r.args, facts);
    if (table === 'nat' && recognised(c, r.args, group, origins, facts)) continue;
    if (own && c.name.startsWith('KUBE-SEP-') && standardSep(r.args, own)) continue;
    const where = own ? chainAlias(c.name, origins) : c.name;
    otherRule(group, `${prefix}${table} ${where}`, r.args, origins, facts);
  }
}

/** The standard SEP rules (hairpin masquerade, DNAT) are implied by the endpoint fact. */
function standardSep(args: readonly string[], o: RuleOrigin): boolean {
  const target = argAfter(args, '-j');
  if (target === 'KUBE-MARK-MASQ') {
    return o.endpoint?.startsWith(`${argAfter(args, '-s')}:`) ?? false;
  }
  return target === 'DNAT' && argAfter(args, '--to-destination') === o.endpoint &&
    !args.includes('recent');
}

function recognised(c: IptablesChain, args: readonly string[], group: string, origins: Origins,
  facts: FactTable): boolean {
  const comment = commentOf(args) ?? '';
  const proto = lowerProto(argAfter(args, '-p'));
  const dport = Number(argAfter(args, '--dport'));
  const target = argAfter(args, '-j') ?? '';
  const toService = /^KUBE-(SVC|EXT|FW|SVL)-/.test(target) && origins.has(target);
  if (!group || !proto || !dport) return svcMasq(c, args, group, facts);
  if (c.name === 'KUBE-SERVICES' && toService) {
    const kind = ADDRESS_KINDS[comment.slice(group.length + 1)];
    const ip = argAfter(args, '-d')?.replace(/\/(32|128)$/, '');
    if (!kind || !ip || args.includes('!')) return false;
    const port = ip.includes(':') ? `[${ip}]:${dport}` : `${ip}:${dport}`;
    setFact(facts, group, `${KIND_LABEL[kind]} ${port}${protoSuffix(proto)}`);
    addTarget(facts, { kind, ip, port: dport, proto });
    return true;
  }
  if (c.name === 'KUBE-NODEPORTS' && toService) {
    setFact(facts, group, `NodePort ${dport}${protoSuffix(proto)}`);
    addTarget(facts, { kind: 'nodeport', ip: '', port: dport, proto });
    return true;
  }
  return svcMasq(c, args, group, facts);
}

/** `KUBE-SVC-… ! -s CIDR -j KUBE-MARK-MASQ`, `KUBE-FW-… -s CIDR -j KUBE-EXT-…`. */
function svcMasq(c: IptablesChain, args: readonly string[], group: string,
  facts: FactTable): boolean {
  const target = argAfter(args, '-j') ?? '';
  if (!group) return false;
  if (c.name.startsWith('KUBE-SVC-') && target === 'KUBE-MARK-MASQ') {
    const i = args.indexOf('-s');
    const neg = args[i - 1] === '!';
    const what = i < 0 ? 'all traffic' : neg ? `traffic from outside ${args[i + 1]}`
      : `traffic from ${args[i + 1]}`;
    setFact(facts, group, `masquerade for ${what} to the service address`);
    return true;
  }
  if (c.name.startsWith('KUBE-FW-') && target.startsWith('KUBE-EXT-') && args.includes('-s')) {
    setFact(facts, group, `source range ${argAfter(args, '-s')}`);
    return true;
  }
  return false;
}

/** Service addresses with no endpoints appear only in the filter table (REJECT / DROP). */
function filterTarget(chain: string, args: readonly string[], facts: FactTable): void {
  if (!/^KUBE-(SERVICES|EXTERNAL-SERVICES|NODEPORTS)$/.test(chain)) return;
  const proto = lowerProto(argAfter(args, '-p'));
  const port = Number(argAfter(args, '--dport'));
  if (!proto || !port) return;
  const ip = argAfter(args, '-d')?.replace(/\/(32|128)$/, '');
  const kind = chain === 'KUBE-SERVICES' ? 'cluster' : 'external';
  if (ip && !args.includes('!')) addTarget(facts, { kind, ip, port, proto });
  else if (!ip && chain === 'KUBE-NODEPORTS') {
    addTarget(facts, { kind: 'nodeport', ip: '', port, proto });
  }
}
