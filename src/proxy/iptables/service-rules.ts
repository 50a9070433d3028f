// The rules of one service port, in upstream's emission order (proxier.go syncProxyRules):
// capture rules in KUBE-SERVICES / KUBE-NODEPORTS / KUBE-EXTERNAL-SERVICES /
// KUBE-PROXY-FIREWALL (written on every sync), then the per-service chains EXT, FW, SVC, SVL and
// one SEP per reachable endpoint (written only when the service changed or on a full sync).

import { cidrContains } from '../../api/net.js';
import { categorizeEndpoints, externallyAccessible, usesClusterEndpoints, usesLocalEndpoints }
  from '../topology.js';
import type { TopologyContext } from '../topology.js';
import type { EndpointInfo, ServicePortInfo } from '../types.js';
import { servicePortNameString } from '../types.js';
import { endpointChainName, servicePortChains } from './chain-names.js';
import type { LocalDetector } from './local-detector.js';
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

const line = (...parts: ReadonlyArray<string | readonly string[]>): string =>
  parts.flat().join(' ');

// The per-endpoint lines are the bulk of a large ruleset: plain template strings, no arrays.
function endpointRules(out: string[], S: string, svc: ServicePortInfo, chain: string,
  eps: readonly EndpointInfo[], sepOf: (ep: EndpointInfo) => string, ctx: RuleContext): void {
  const head = (ep: EndpointInfo) => (ctx.largeClusterMode ? `-A ${chain}`
    : `-A ${chain} -m comment --comment "${S} -> ${ep.endpoint}"`);
  if (svc.sessionAffinityClientIP) {
    for (const ep of eps) {
      const sep = sepOf(ep);
      out.push(`${head(ep)} -m recent --name ${sep} --rcheck --seconds ` +
        `${svc.stickyMaxAgeSeconds} --reap -j ${sep}`);
    }
  }
  const n = eps.length;
  for (let i = 0; i < n; i++) {
    const ep = eps[i]!;
    const sep = sepOf(ep);
    out.push(i < n - 1
      ? `${head(ep)} -m statistic --mode random --probability ${ctx.probabilities.get(n - i)} ` +
        `-j ${sep}`
      : `${head(ep)} -j ${sep}`);
  }
}

export function servicePortRules(svc: ServicePortInfo, eps: readonly EndpointInfo[],
  ctx: RuleContext): PortRules {
  const S = servicePortNameString(svc.name);
  const p = svc.protocol.toLowerCase();
  const ch = servicePortChains(S, p);
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
  const filter: string[] = [];
  const cap: string[] = [];
  // Template strings, not arrays joined: these run for every service port on every sync.
  const proto = `-m ${p} -p ${p}`;
  const dport = `--dport ${svc.port}`;
  const cm = (c: string) => `-m comment --comment ${c}`;

  if (hasInternal) {
    cap.push(`-A KUBE-SERVICES ${cm(`"${S} cluster IP"`)} ${proto} -d ${svc.clusterIP} ` +
      `${dport} -j ${internalChain}`);
  } else {
    filter.push(`-A KUBE-SERVICES ${cm(intComment)} ${proto} -d ${svc.clusterIP} ${dport} ` +
      `-j ${intTarget}`);
  }
  for (const xip of svc.externalIPs) {
    if (hasEndpoints) {
      cap.push(`-A KUBE-SERVICES ${cm(`"${S} external IP"`)} ${proto} -d ${xip} ${dport} ` +
        `-j ${ch.ext}`);
    }
    if (!hasExternal) {
      filter.push(`-A KUBE-EXTERNAL-SERVICES ${cm(extComment)} ${proto} -d ${xip} ${dport} ` +
        `-j ${extTarget}`);
    }
  }
  for (const lbip of svc.loadBalancerVIPs) {
    if (hasEndpoints) {
      cap.push(`-A KUBE-SERVICES ${cm(`"${S} loadbalancer IP"`)} ${proto} -d ${lbip} ` +
        `${dport} -j ${lbTarget}`);
    }
    if (usesFW) {
      filter.push(`-A KUBE-PROXY-FIREWALL ${cm(`"${S} traffic not accepted by ${ch.fw}"`)} ` +
        `${proto} -d ${lbip} ${dport} -j DROP`);
    }
  }
  if (!hasExternal) {
    for (const lbip of svc.loadBalancerVIPs) {
      filter.push(`-A KUBE-EXTERNAL-SERVICES ${cm(extComment)} ${proto} -d ${lbip} ${dport} ` +
        `-j ${extTarget}`);
    }
  }
  if (svc.nodePort !== 0) {
    const np = `--dport ${svc.nodePort}`;
    if (hasEndpoints) {
      if (ctx.localhostNodePorts && ctx.isIPv4 && ctx.nfacct) {
        cap.push(`-A KUBE-NODEPORTS ${cm(S)} ${proto} -d 127.0.0.0/8 ${np} -m nfacct ` +
          `--nfacct-name localhost_nps_accepted_pkts -j ${ch.ext}`);
      }
      cap.push(`-A KUBE-NODEPORTS ${cm(S)} ${proto} ${np} -j ${ch.ext}`);
    }
    if (!hasExternal) {
      filter.push(`-A KUBE-EXTERNAL-SERVICES ${cm(extComment)} -m addrtype --dst-type LOCAL ` +
        `${proto} ${np} -j ${extTarget}`);
    }
  }
  if (svc.healthCheckNodePort !== 0) {
    filter.push(`-A KUBE-NODEPORTS ${cm(`"${S} health check node port"`)} -m tcp -p tcp ` +
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
  // Each endpoint's chain name is hashed once per computation (upstream caches it likewise).
  const seps = new Map<EndpointInfo, string>();
  const sepOf = (ep: EndpointInfo): string => {
    let n = seps.get(ep);
    if (n === undefined) seps.set(ep, (n = endpointChainName(S, p, ep.endpoint)));
    return n;
  };
  if (hasInternal) {
    const head = `-A ${internalChain} ${cm(`"${S} cluster IP"`)} ${proto} -d ${svc.clusterIP} ` +
      dport;
    if (ctx.masqueradeAll) rules.push(`${head} -j KUBE-MARK-MASQ`);
    else if (ctx.detector.implemented) {
      rules.push(`${head} ${ctx.detector.ifNotLocal.join(' ')} -j KUBE-MARK-MASQ`);
    }
  }
  if (usesExt) {
    declare(ch.ext);
    if (!svc.externalPolicyLocal) {
      rules.push(line('-A', ch.ext, cm(`"masquerade traffic for ${S} external destinations"`),
        '-j KUBE-MARK-MASQ'));
    } else {
      if (ctx.detector.implemented) {
        rules.push(line('-A', ch.ext, cm(`"pod traffic for ${S} external destinations"`),
          ctx.detector.ifLocal, '-j', ch.svc));
      }
      rules.push(line('-A', ch.ext,
        cm(`"masquerade LOCAL traffic for ${S} external destinations"`),
        '-m addrtype --src-type LOCAL -j KUBE-MARK-MASQ'));
      rules.push(line('-A', ch.ext, cm(`"route LOCAL traffic for ${S} external destinations"`),
        '-m addrtype --src-type LOCAL -j', ch.svc));
    }
    if (hasExternal) rules.push(line('-A', ch.ext, '-j', externalPolicyChain));
  }
  if (usesFW) {
    declare(ch.fw);
    const head = line('-A', ch.fw, cm(`"${S} loadbalancer IP"`));
    let allowFromNode = false;
    for (const cidr of svc.loadBalancerSourceRanges) {
      rules.push(`${head} -s ${cidr} -j ${ch.ext}`);
      if (ctx.nodeIP !== undefined && cidrContains(cidr, ctx.nodeIP)) allowFromNode = true;
    }
    if (allowFromNode) {
      for (const lbip of svc.loadBalancerVIPs) rules.push(`${head} -s ${lbip} -j ${ch.ext}`);
    }
    rules.push(line('-A', ch.fw,
      cm(`"other traffic to ${S} will be dropped by KUBE-PROXY-FIREWALL"`)));
  }
  if (usesCluster) {
    declare(ch.svc);
    endpointRules(rules, S, svc, ch.svc, cat.cluster, sepOf, ctx);
  }
  if (usesLocal) {
    declare(ch.svl);
    endpointRules(rules, S, svc, ch.svl, cat.local, sepOf, ctx);
  }
  for (const ep of cat.allReachable) {
    const sep = sepOf(ep);
    declare(sep, ep.endpoint);
    const base = ctx.largeClusterMode ? `-A ${sep}` : `-A ${sep} -m comment --comment ${S}`;
    rules.push(`${base} -s ${ep.ip} -j KUBE-MARK-MASQ`);
    const recent = svc.sessionAffinityClientIP ? ` -m recent --name ${sep} --set` : '';
    rules.push(`${base}${recent} -m ${p} -p ${p} -j DNAT --to-destination ${ep.endpoint}`);
  }
  return {
    filterRules: filter.join('\n'), natCapture: cap.join('\n'),
    natChainLines: chainLines.join('\n'), natChainRules: rules.join('\n'),
    servicePort: S, chains, chainEndpoints,
    noLocalInternal: hasEndpoints && !hasInternal, noLocalExternal: hasEndpoints && !hasExternal,
  };
}
