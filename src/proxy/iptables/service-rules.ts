// The rules of one service port, in upstream's emission order (proxier.go syncProxyRules):
// capture rules in KUBE-SERVICES / KUBE-NODEPORTS / KUBE-EXTERNAL-SERVICES /
// KUBE-PROXY-FIREWALL (written on every sync), then the per-service chains EXT, FW, SVC, SVL and
// one SEP per reachable endpoint (written only when the service changed or on a full sync).

import { cidrContains } from '../../api/net.js';
import { categorizeEndpoints, externallyAccessible, usesClusterEndpoints, usesLocalEndpoints }
  from '../topology.js';
import type { TopologyContext } from '../topology.js';
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

/** Everything one service port contributes to a sync; texts are lines joined, '' = none. */
export interface PortRules {
  readonly filterRules: string;
  /** nat rules in KUBE-SERVICES / KUBE-NODEPORTS: written on every sync. */
  readonly natCapture: string;
  /** `:CHAIN - [0:0]` lines of the per-service chains (not kept once written). */
  readonly natChainLines: string;
  /** Rules of the per-service chains (not kept once written). */
  readonly natChainRules: string;
  /** `ns/name:port` of the service port (the origin of every chain below). */
  readonly servicePort: string;
  /** Active per-service chain names. */
  readonly chains: readonly string[];
  /** The endpoint `ip:port` of each chain of `chains` (KUBE-SEP), else undefined. */
  readonly chainEndpoints: ReadonlyArray<string | undefined>;
  /** Counted for the no-local-endpoints gauge. */
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

// The per-endpoint lines are the bulk of a large ruleset: plain template strings, no arrays.
function endpointRules(out: string[], n: PortNames, svc: ServicePortInfo, chain: string,
  eps: readonly EndpointInfo[], seps: readonly string[], ctx: RuleContext): void {
  const large = ctx.largeClusterMode;
  const plain = `-A ${chain}`;
  const head = (ep: EndpointInfo) => (large ? plain
    : `${plain} -m comment --comment "${n.S} -> ${ep.endpoint}"`);
  if (svc.sessionAffinityClientIP) {
    for (let i = 0; i < eps.length; i++) {
      const sep = seps[i]!;
      out.push(`${head(eps[i]!)} -m recent --name ${sep} --rcheck --seconds ` +
        `${svc.stickyMaxAgeSeconds} --reap -j ${sep}`);
    }
  }
  const last = eps.length - 1;
  for (let i = 0; i < last; i++) {
    out.push(`${head(eps[i]!)} -m statistic --mode random --probability ` +
      `${ctx.probabilities.get(last + 1 - i)} -j ${seps[i]!}`);
  }
  if (last >= 0) out.push(`${head(eps[last]!)} -j ${seps[last]!}`);
}

/** The KUBE-SEP names of `eps`, from the cache. */
function sepNames(ctx: RuleContext, n: PortNames, eps: readonly EndpointInfo[]): string[] {
  const out = new Array<string>(eps.length);
  for (let i = 0; i < eps.length; i++) out[i] = ctx.names.sep(n, eps[i]!);
  return out;
}

export function servicePortRules(svc: ServicePortInfo, eps: readonly EndpointInfo[],
  ctx: RuleContext): PortRules {
  const ch = ctx.names.port(svc);
  const S = ch.S;
  const cat = categorizeEndpoints(eps, svc, ctx.topology);
  const hasEndpoints = cat.hasAnyEndpoints;
  const usesCluster = cat.cluster.length > 0 && usesClusterEndpoints(svc);
  const usesLocal = cat.local.length > 0 && usesLocalEndpoints(svc);
  const internalChain = svc.internalPolicyLocal ? ch.svl : ch.svc;
  const hasInternal = hasEndpoints && (!svc.internalPolicyLocal || cat.local.length > 0);
  const externalPolicyChain = svc.externalPolicyLocal ? ch.svl : ch.svc;
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
  const addFilter = (l: string) => { filter = filter === '' ? l : `${filter}\n${l}`; };
  const addCap = (l: string) => { cap = cap === '' ? l : `${cap}\n${l}`; };
  // Template strings, not arrays joined: these run for every service port on every sync.
  const proto = ch.proto;
  const dport = `--dport ${svc.port}`;
  const cm = '-m comment --comment';

  if (hasInternal) {
    addCap(`-A KUBE-SERVICES ${cm} "${S} cluster IP" ${ch.clusterMatch} -j ${internalChain}`);
  } else {
    addFilter(`-A KUBE-SERVICES ${cm} ${intComment} ${ch.clusterMatch} -j ${intTarget}`);
  }
  for (const xip of svc.externalIPs) {
    if (hasEndpoints) {
      addCap(`-A KUBE-SERVICES ${cm} "${S} external IP" ${proto} -d ${xip} ${dport} ` +
        `-j ${ch.ext}`);
    }
    if (!hasExternal) {
      addFilter(`-A KUBE-EXTERNAL-SERVICES ${cm} ${extComment} ${proto} -d ${xip} ${dport} ` +
        `-j ${extTarget}`);
    }
  }
  for (const lbip of svc.loadBalancerVIPs) {
    if (hasEndpoints) {
      addCap(`-A KUBE-SERVICES ${cm} "${S} loadbalancer IP" ${proto} -d ${lbip} ` +
        `${dport} -j ${lbTarget}`);
    }
    if (usesFW) {
      addFilter(`-A KUBE-PROXY-FIREWALL ${cm} "${S} traffic not accepted by ${ch.fw}" ` +
        `${proto} -d ${lbip} ${dport} -j DROP`);
    }
  }
  if (!hasExternal) {
    for (const lbip of svc.loadBalancerVIPs) {
      addFilter(`-A KUBE-EXTERNAL-SERVICES ${cm} ${extComment} ${proto} -d ${lbip} ${dport} ` +
        `-j ${extTarget}`);
    }
  }
  if (svc.nodePort !== 0) {
    const np = `--dport ${svc.nodePort}`;
    if (hasEndpoints) {
      if (ctx.localhostNodePorts && ctx.isIPv4 && ctx.nfacct) {
        addCap(`-A KUBE-NODEPORTS ${cm} ${S} ${proto} -d 127.0.0.0/8 ${np} -m nfacct ` +
          `--nfacct-name localhost_nps_accepted_pkts -j ${ch.ext}`);
      }
      addCap(`-A KUBE-NODEPORTS ${cm} ${S} ${proto} ${np} -j ${ch.ext}`);
    }
    if (!hasExternal) {
      addFilter(`-A KUBE-EXTERNAL-SERVICES ${cm} ${extComment} -m addrtype --dst-type LOCAL ` +
        `${proto} ${np} -j ${extTarget}`);
    }
  }
  if (svc.healthCheckNodePort !== 0) {
    addFilter(`-A KUBE-NODEPORTS ${cm} "${S} health check node port" -m tcp -p tcp ` +
      `--dport ${svc.healthCheckNodePort} -j ACCEPT`);
  }

  const chainLines: string[] = [];
  const rules: string[] = [];
  const chains: string[] = [];
  const chainEndpoints: Array<string | undefined> = [];
  const declare = (name: string, endpoint?: string) => {
    chainLines.push(`:${name} - [0:0]`);
    chains.push(name);
    chainEndpoints.push(endpoint);
  };
  if (hasInternal) {
    const head = `-A ${internalChain} ${cm} "${S} cluster IP" ${ch.clusterMatch}`;
    if (ctx.masqueradeAll) rules.push(`${head} -j KUBE-MARK-MASQ`);
    else if (ctx.detector.implemented) rules.push(`${head} ${ctx.ifNotLocal} -j KUBE-MARK-MASQ`);
  }
  if (usesExt) {
    declare(ch.ext);
    const a = `-A ${ch.ext} ${cm}`;
    if (!svc.externalPolicyLocal) {
      rules.push(`${a} "masquerade traffic for ${S} external destinations" -j KUBE-MARK-MASQ`);
    } else {
      if (ctx.detector.implemented) {
        rules.push(`${a} "pod traffic for ${S} external destinations" ${ctx.ifLocal} ` +
          `-j ${ch.svc}`);
      }
      rules.push(`${a} "masquerade LOCAL traffic for ${S} external destinations" ` +
        '-m addrtype --src-type LOCAL -j KUBE-MARK-MASQ');
      rules.push(`${a} "route LOCAL traffic for ${S} external destinations" ` +
        `-m addrtype --src-type LOCAL -j ${ch.svc}`);
    }
    if (hasExternal) rules.push(`-A ${ch.ext} -j ${externalPolicyChain}`);
  }
  if (usesFW) {
    declare(ch.fw);
    const head = `-A ${ch.fw} ${cm} "${S} loadbalancer IP"`;
    let allowFromNode = false;
    for (const cidr of svc.loadBalancerSourceRanges) {
      rules.push(`${head} -s ${cidr} -j ${ch.ext}`);
      if (ctx.nodeIP !== undefined && cidrContains(cidr, ctx.nodeIP)) allowFromNode = true;
    }
    if (allowFromNode) {
      for (const lbip of svc.loadBalancerVIPs) rules.push(`${head} -s ${lbip} -j ${ch.ext}`);
    }
    rules.push(`-A ${ch.fw} ${cm} "other traffic to ${S} will be dropped by ` +
      'KUBE-PROXY-FIREWALL"');
  }
  // Each endpoint's chain name comes from the cache (upstream's endpointInfo.ChainName).
  const reachable = cat.allReachable;
  const seps = sepNames(ctx, ch, reachable);
  ctx.names.prune(ch, reachable);
  const sepsOf = (list: readonly EndpointInfo[]) =>
    (list === reachable ? seps : sepNames(ctx, ch, list));
  if (usesCluster) {
    declare(ch.svc);
    endpointRules(rules, ch, svc, ch.svc, cat.cluster, sepsOf(cat.cluster), ctx);
  }
  if (usesLocal) {
    declare(ch.svl);
    endpointRules(rules, ch, svc, ch.svl, cat.local, sepsOf(cat.local), ctx);
  }
  const base = ctx.largeClusterMode ? '' : ` ${cm} ${S}`;
  const recent = svc.sessionAffinityClientIP ? ' -m recent --name ' : '';
  for (let i = 0; i < reachable.length; i++) {
    const ep = reachable[i]!;
    const sep = seps[i]!;
    declare(sep, ep.endpoint);
    rules.push(`-A ${sep}${base} -s ${ep.ip} -j KUBE-MARK-MASQ`);
    rules.push(recent === ''
      ? `-A ${sep}${base} ${proto} -j DNAT --to-destination ${ep.endpoint}`
      : `-A ${sep}${base}${recent}${sep} --set ${proto} -j DNAT --to-destination ` +
        ep.endpoint);
  }
  return {
    filterRules: filter, natCapture: cap,
    natChainLines: chainLines.join('\n'), natChainRules: rules.join('\n'),
    servicePort: S, chains, chainEndpoints,
    noLocalInternal: hasEndpoints && !hasInternal, noLocalExternal: hasEndpoints && !hasExternal,
  };
}
