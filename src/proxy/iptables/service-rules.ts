// The rules of one service port, in upstream's emission order (proxier.go syncProxyRules):
// capture rules in KUBE-SERVICES / KUBE-NODEPORTS / KUBE-EXTERNAL-SERVICES /
// KUBE-PROXY-FIREWALL (written on every sync; `planServicePort`), then the per-service chains
// EXT, FW, SVC, SVL and one SEP per reachable endpoint (written only when the service changed
// or on a full sync; `writeChainDecls` / `writeChainRules`).

import { cidrContains } from '../../api/net.js';
import { categorizeEndpoints, externallyAccessible, usesClusterEndpoints, usesLocalEndpoints }
  from '../topology.js';
import type { CategorizedEndpoints, TopologyContext } from '../topology.js';
import type { TextSink } from '../text-sink.js';
import type { EndpointInfo, ServicePortInfo } from '../types.js';
import type { LocalDetector } from './local-detector.js';
import type { NameCache, PortNames } from './name-cache.js';
import type { Probabilities } from './probability.js';

export interface RuleContext {
  readonly masqueradeAll: boolean;
  readonly detector: LocalDetector;
  /** The proxier's node IP (upstream has one per family), for the FW allow-from-node rule. */
  readonly nodeIP: string | undefined;
  readonly localhostNodePorts: boolean;
  readonly isIPv4: boolean;
  /** nfacct counter `localhost_nps_accepted_pkts` could be ensured. */
  readonly nfacct: boolean;
  readonly largeClusterMode: boolean;
  readonly topology: TopologyContext;
  readonly probabilities: Probabilities;
  /** Chain names per service port / endpoint, kept across syncs by the proxier. */
  readonly names: NameCache;
  /** `detector.ifLocal` / `ifNotLocal` joined with spaces. */
  readonly ifLocal: string;
  readonly ifNotLocal: string;
}

/**
 * What one service port contributes to every sync, kept across syncs; texts are lines joined,
 * '' = none. The per-service chains' rules are not kept: they are written straight into the
 * sync's output (`writeChainRules`) when the service is written.
 */
export interface PortRules {
  readonly filterRules: string;
  /** nat rules in KUBE-SERVICES / KUBE-NODEPORTS: written on every sync. */
  readonly natCapture: string;
  /** `ns/name:port` of the service port (the origin of every chain below). */
  readonly servicePort: string;
  /** Active per-service chain names, in declaration order. */
  readonly chains: readonly string[];
  /** The endpoint `ip:port` of each chain of `chains` (KUBE-SEP), else undefined. */
  readonly chainEndpoints: ReadonlyArray<string | undefined>;
  /** Counted for the no-local-endpoints gauge. */
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

/** A service port's rules plus what writing its chains needs (lives for one sync). */
export interface PortPlan {
  readonly rules: PortRules;
  readonly svc: ServicePortInfo;
  readonly names: PortNames;
  readonly cat: CategorizedEndpoints;
  /** KUBE-SEP names of `cat.allReachable`. */
  readonly seps: readonly string[];
  readonly hasInternal: boolean;
  readonly hasExternal: boolean;
  readonly usesExt: boolean;
  readonly usesFW: boolean;
  readonly usesCluster: boolean;
  readonly usesLocal: boolean;
}

// The per-endpoint lines are the bulk of a large ruleset: plain template strings written one
// by one (no arrays, no closures: this runs for every endpoint of every written service).
function writeEndpointRules(out: TextSink, n: PortNames, svc: ServicePortInfo, chain: string,
  eps: readonly EndpointInfo[], seps: readonly string[], ctx: RuleContext): void {
  const large = ctx.largeClusterMode;
  const plain = `-A ${chain}`;
  const commented = `${plain} -m comment --comment "${n.S} -> `;
  if (svc.sessionAffinityClientIP) {
    const tail = ` --rcheck --seconds ${svc.stickyMaxAgeSeconds} --reap -j `;
    for (let i = 0; i < eps.length; i++) {
      const sep = seps[i]!;
      const head = large ? plain : `${commented}${eps[i]!.endpoint}"`;
      out.line(`${head} -m recent --name ${sep}${tail}${sep}`);
    }
  }
  const last = eps.length - 1;
  for (let i = 0; i < last; i++) {
    const head = large ? plain : `${commented}${eps[i]!.endpoint}"`;
    out.line(`${head} -m statistic --mode random --probability ` +
      `${ctx.probabilities.get(last + 1 - i)} -j ${seps[i]!}`);
  }
  if (last >= 0) {
    const head = large ? plain : `${commented}${eps[last]!.endpoint}"`;
    out.line(`${head} -j ${seps[last]!}`);
  }
}

/** The KUBE-SEP names of `eps`, from the cache. */
function sepNames(ctx: RuleContext, n: PortNames, eps: readonly EndpointInfo[]): string[] {
  const out = new Array<string>(eps.length);
  for (let i = 0; i < eps.length; i++) out[i] = ctx.names.sep(n, eps[i]!);
  return out;
}

const join = (text: string, line: string) => (text === '' ? line : `${text}\n${line}`);

const CM = '-m comment --comment';

export function planServicePort(svc: ServicePortInfo, eps: readonly EndpointInfo[],
  ctx: RuleContext): PortPlan {
  const ch = ctx.names.port(svc);
  const S = ch.S;
  const cat = categorizeEndpoints(eps, svc, ctx.topology);
  const hasEndpoints = cat.hasAnyEndpoints;
  const usesCluster = cat.cluster.length > 0 && usesClusterEndpoints(svc);
  const usesLocal = cat.local.length > 0 && usesLocalEndpoints(svc);
  const internalChain = svc.internalPolicyLocal ? ch.svl : ch.svc;
  const hasInternal = hasEndpoints && (!svc.internalPolicyLocal || cat.local.length > 0);
  const hasExternal = hasEndpoints && (!svc.externalPolicyLocal || cat.local.length > 0);
  const usesExt = hasEndpoints && externallyAccessible(svc);
  const usesFW = hasEndpoints && svc.loadBalancerVIPs.length > 0 &&
    svc.loadBalancerSourceRanges.length > 0;
  const lbTarget = usesFW ? ch.fw : ch.ext;
  let intTarget = '';
  let intComment = '';
  let extTarget = '';
  let extComment = '';
  if (!hasEndpoints) {
    intTarget = extTarget = 'REJECT';
    intComment = extComment = `"${S} has no endpoints"`;
  } else {
    if (!hasInternal) { intTarget = 'DROP'; intComment = `"${S} has no local endpoints"`; }
    if (!hasExternal) { extTarget = 'DROP'; extComment = `"${S} has no local endpoints"`; }
  }
  let filter = '';
  let cap = '';
  const proto = ch.proto;
  const dport = `--dport ${svc.port}`;

  if (hasInternal) {
    cap = join(cap, `-A KUBE-SERVICES ${CM} "${S} cluster IP" ${ch.clusterMatch} ` +
      `-j ${internalChain}`);
  } else {
    filter = join(filter, `-A KUBE-SERVICES ${CM} ${intComment} ${ch.clusterMatch} ` +
      `-j ${intTarget}`);
  }
  for (const xip of svc.externalIPs) {
    if (hasEndpoints) {
      cap = join(cap, `-A KUBE-SERVICES ${CM} "${S} external IP" ${proto} -d ${xip} ` +
        `${dport} -j ${ch.ext}`);
    }
    if (!hasExternal) {
      filter = join(filter, `-A KUBE-EXTERNAL-SERVICES ${CM} ${extComment} ${proto} ` +
        `-d ${xip} ${dport} -j ${extTarget}`);
    }
  }
  for (const lbip of svc.loadBalancerVIPs) {
    if (hasEndpoints) {
      cap = join(cap, `-A KUBE-SERVICES ${CM} "${S} loadbalancer IP" ${proto} -d ${lbip} ` +
        `${dport} -j ${lbTarget}`);
    }
    if (usesFW) {
      filter = join(filter, `-A KUBE-PROXY-FIREWALL ${CM} "${S} traffic not accepted by ` +
        `${ch.fw}" ${proto} -d ${lbip} ${dport} -j DROP`);
    }
  }
  if (!hasExternal) {
    for (const lbip of svc.loadBalancerVIPs) {
      filter = join(filter, `-A KUBE-EXTERNAL-SERVICES ${CM} ${extComment} ${proto} ` +
        `-d ${lbip} ${dport} -j ${extTarget}`);
    }
  }
  if (svc.nodePort !== 0) {
    const np = `--dport ${svc.nodePort}`;
    if (hasEndpoints) {
      if (ctx.localhostNodePorts && ctx.isIPv4 && ctx.nfacct) {
        cap = join(cap, `-A KUBE-NODEPORTS ${CM} ${S} ${proto} -d 127.0.0.0/8 ${np} ` +
          `-m nfacct --nfacct-name localhost_nps_accepted_pkts -j ${ch.ext}`);
      }
      cap = join(cap, `-A KUBE-NODEPORTS ${CM} ${S} ${proto} ${np} -j ${ch.ext}`);
    }
    if (!hasExternal) {
      filter = join(filter, `-A KUBE-EXTERNAL-SERVICES ${CM} ${extComment} -m addrtype ` +
        `--dst-type LOCAL ${proto} ${np} -j ${extTarget}`);
    }
  }
  if (svc.healthCheckNodePort !== 0) {
    filter = join(filter, `-A KUBE-NODEPORTS ${CM} "${S} health check node port" ` +
      `-m tcp -p tcp --dport ${svc.healthCheckNodePort} -j ACCEPT`);
  }

  // Declaration order: EXT, FW, SVC, SVL, then one SEP per reachable endpoint.
  const reachable = cat.allReachable;
  const seps = sepNames(ctx, ch, reachable);
  ctx.names.prune(ch, reachable);
  const chains: string[] = [];
  const chainEndpoints: Array<string | undefined> = [];
  if (usesExt) { chains.push(ch.ext); chainEndpoints.push(undefined); }
  if (usesFW) { chains.push(ch.fw); chainEndpoints.push(undefined); }
  if (usesCluster) { chains.push(ch.svc); chainEndpoints.push(undefined); }
  if (usesLocal) { chains.push(ch.svl); chainEndpoints.push(undefined); }
  for (let i = 0; i < reachable.length; i++) {
    chains.push(seps[i]!);
    chainEndpoints.push(reachable[i]!.endpoint);
  }
  const rules: PortRules = {
    filterRules: filter, natCapture: cap, servicePort: S, chains, chainEndpoints,
    noLocalInternal: hasEndpoints && !hasInternal, noLocalExternal: hasEndpoints && !hasExternal,
  };
  return { rules, svc, names: ch, cat, seps, hasInternal, hasExternal, usesExt, usesFW,
    usesCluster, usesLocal };
}

/** `:CHAIN - [0:0]` of every chain of `rules`. */
export function writeChainDecls(rules: PortRules, out: TextSink): void {
  for (const name of rules.chains) out.line(`:${name} - [0:0]`);
}

/** The rules of a port's own chains (EXT, FW, SVC, SVL, SEPs), in upstream's order. */
export function writeChainRules(plan: PortPlan, ctx: RuleContext, out: TextSink): void {
  const { svc, names: ch, cat, seps } = plan;
  const S = ch.S;
  if (plan.hasInternal) {
    const internalChain = svc.internalPolicyLocal ? ch.svl : ch.svc;
    const head = `-A ${internalChain} ${CM} "${S} cluster IP" ${ch.clusterMatch}`;
    if (ctx.masqueradeAll) out.line(`${head} -j KUBE-MARK-MASQ`);
    else if (ctx.detector.implemented) out.line(`${head} ${ctx.ifNotLocal} -j KUBE-MARK-MASQ`);
  }
  if (plan.usesExt) {
    const a = `-A ${ch.ext} ${CM}`;
    if (!svc.externalPolicyLocal) {
      out.line(`${a} "masquerade traffic for ${S} external destinations" -j KUBE-MARK-MASQ`);
    } else {
      if (ctx.detector.implemented) {
        out.line(`${a} "pod traffic for ${S} external destinations" ${ctx.ifLocal} ` +
          `-j ${ch.svc}`);
      }
      out.line(`${a} "masquerade LOCAL traffic for ${S} external destinations" ` +
        '-m addrtype --src-type LOCAL -j KUBE-MARK-MASQ');
      out.line(`${a} "route LOCAL traffic for ${S} external destinations" ` +
        `-m addrtype --src-type LOCAL -j ${ch.svc}`);
    }
    if (plan.hasExternal) {
      out.line(`-A ${ch.ext} -j ${svc.externalPolicyLocal ? ch.svl : ch.svc}`);
    }
  }
  if (plan.usesFW) writeFirewallRules(plan, ctx, out);
  const reachable = cat.allReachable;
  if (plan.usesCluster) {
    const list = cat.cluster;
    writeEndpointRules(out, ch, svc, ch.svc, list,
      list === reachable ? seps : sepNames(ctx, ch, list), ctx);
  }
  if (plan.usesLocal) {
    const list = cat.local;
    writeEndpointRules(out, ch, svc, ch.svl, list,
      list === reachable ? seps : sepNames(ctx, ch, list), ctx);
  }
  const base = ctx.largeClusterMode ? '' : ` ${CM} ${S}`;
  const dnat = ` ${ch.proto} -j DNAT --to-destination `;
  for (let i = 0; i < reachable.length; i++) {
    const ep = reachable[i]!;
    const sep = seps[i]!;
    out.line(`-A ${sep}${base} -s ${ep.ip} -j KUBE-MARK-MASQ`);
    out.line(svc.sessionAffinityClientIP
      ? `-A ${sep}${base} -m recent --name ${sep} --set${dnat}${ep.endpoint}`
      : `-A ${sep}${base}${dnat}${ep.endpoint}`);
  }
}

function writeFirewallRules(plan: PortPlan, ctx: RuleContext, out: TextSink): void {
  const { svc, names: ch } = plan;
  const head = `-A ${ch.fw} ${CM} "${ch.S} loadbalancer IP"`;
  let allowFromNode = false;
  for (const cidr of svc.loadBalancerSourceRanges) {
    out.line(`${head} -s ${cidr} -j ${ch.ext}`);
    if (ctx.nodeIP !== undefined && cidrContains(cidr, ctx.nodeIP)) allowFromNode = true;
  }
  if (allowFromNode) {
    for (const lbip of svc.loadBalancerVIPs) out.line(`${head} -s ${lbip} -j ${ch.ext}`);
  }
  out.line(`-A ${ch.fw} ${CM} "other traffic to ${ch.S} will be dropped by ` +
    'KUBE-PROXY-FIREWALL"');
}
