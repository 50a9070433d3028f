// Chain names and fixed rule fragments per service port and per endpoint, computed once per
// ServicePortInfo / EndpointInfo object and reused by later syncs. Upstream caches the same
// names in its iptables serviceInfo / endpointInfo (servicePortChainName, ChainName, ...), which
// the change trackers create anew whenever a Service or its endpoints change; kdp's trackers
// likewise replace the info objects on change, so caching by object identity is equivalent.
// Endpoint names are kept per service port by `ip:port` (a service port's endpoints churn; the
// map is pruned when it grows well past the port's current endpoints).

import type { EndpointInfo, ServicePortInfo } from '../types.js';
import { servicePortNameString } from '../types.js';
import { endpointChainName, servicePortChains } from './chain-names.js';

/** Strings of one service port that do not depend on its endpoints. */
export interface PortNames {
  /** `ns/name[:port]` (upstream svcPortNameString). */
  readonly S: string;
  /** Lower-case protocol. */
  readonly p: string;
  /** `-m tcp -p tcp`. */
  readonly proto: string;
  /** `-m tcp -p tcp -d 10.96.0.10 --dport 80`. */
  readonly clusterMatch: string;
  readonly svc: string;
  readonly svl: string;
  readonly fw: string;
  readonly ext: string;
  /** Endpoint `ip:port` → KUBE-SEP name (depends only on S, p and the endpoint). */
  readonly seps: Map<string, string>;
}

export class NameCache {
  private readonly ports = new WeakMap<ServicePortInfo, PortNames>();

  port(svc: ServicePortInfo): PortNames {
    let n = this.ports.get(svc);
    if (n === undefined) {
      const S = servicePortNameString(svc.name);
      const p = svc.protocol.toLowerCase();
      const proto = `-m ${p} -p ${p}`;
      n = { S, p, proto, clusterMatch: `${proto} -d ${svc.clusterIP} --dport ${svc.port}`,
        ...servicePortChains(S, p), seps: new Map() };
      this.ports.set(svc, n);
    }
    return n;
  }

  /** KUBE-SEP-… of `ep` in the service port `names`. */
  sep(names: PortNames, ep: EndpointInfo): string {
    let name = names.seps.get(ep.endpoint);
    if (name === undefined) {
      name = endpointChainName(names.S, names.p, ep.endpoint);
      names.seps.set(ep.endpoint, name);
    }
    return name;
  }

  /** Forget endpoints of `names` other than `keep` once it has collected too many. */
  prune(names: PortNames, keep: readonly EndpointInfo[]): void {
    if (names.seps.size <= 2 * keep.length + 16) return;
    const kept = new Map<string, string>();
    for (const ep of keep) {
      const n = names.seps.get(ep.endpoint);
      if (n !== undefined) kept.set(ep.endpoint, n);
    }
    names.seps.clear();
    for (const [k, v] of kept) names.seps.set(k, v);
  }
}
