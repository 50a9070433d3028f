// The contract every proxy mode implements (iptables/, nftables/, ipvs/ each export
// `buildProxier(config)` from their `proxier.ts`; registry.ts lists the modes). A backend is stateful: it remembers what it
// last produced so that later syncs can be partial, as upstream's are.

import type { EndpointsMap, IPFamily, ServicePortMap } from './types.js';

import type { ProxyMode } from './registry.js';

export type { ProxyMode };

/** How "traffic from inside the cluster" is recognised (upstream detectLocalMode). */
export interface DetectLocal {
  readonly mode: 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix' | 'None';
  /** CIDRs of this proxier's family for ClusterCIDR / NodeCIDR. */
  readonly cidrs: readonly string[];
  /** For BridgeInterface / InterfaceNamePrefix. */
  readonly interfaceName?: string;
}

/** Validated, defaulted configuration of one proxier (one IP family). */
export interface ProxierConfig {
  readonly mode: ProxyMode;
  readonly family: IPFamily;
  readonly nodeName: string;
  /** This node's IPs of this family (the node's local addresses). */
  readonly nodeIPs: readonly string[];
  readonly detectLocal: DetectLocal;
  /** iptables.masqueradeBit (default 14) → mark 0x4000 etc. */
  readonly masqueradeBit: number;
  readonly masqueradeAll: boolean;
  /** iptables.localhostNodePorts (default true; IPv4 only). */
  readonly localhostNodePorts: boolean;
  /** nodePortAddresses CIDRs of this family, or ['primary'] semantics as upstream; [] = all. */
  readonly nodePortAddresses: readonly string[];
  /** Service CIDRs of this family, learnt from ServiceCIDR objects. */
  readonly serviceCIDRs: readonly string[];
  readonly minSyncPeriodMs: number;
  readonly syncPeriodMs: number;
  /** ipvs.scheduler (default 'rr'). */
  readonly ipvsScheduler: string;
  readonly ipvsStrictARP: boolean;
  /** The node's `topology.kubernetes.io/zone` label ('' or absent = none), for topology hints. */
  readonly nodeZone?: string;
  /** kube-proxy feature gates that change rules (PreferSameTrafficDistribution, ...). */
  readonly featureGates?: Readonly<Record<string, boolean>>;
  /** Host capabilities upstream detects at run time, fixed so an offline compile is exact. */
  readonly capabilities: {
    /** `MASQUERADE --random-fully` available (iptables). */
    readonly randomFully: boolean;
    /** nfacct counters for localhost NodePorts (iptables). */
    readonly nfacct: boolean;
  };
}

/** What a chain, set or map was generated for; used by the tracer and the diff. */
export interface RuleOrigin {
  /** `ns/name:port` of the service port. */
  readonly servicePort: string;
  /** `ip:port` when the object belongs to one endpoint. */
  readonly endpoint?: string;
}

export interface SyncInput {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  /**
   * Service-port keys (`servicePortKey`) whose Service or endpoints changed since the last
   * sync. Undefined forces a full sync. The backend decides whether it may sync partially.
   */
  readonly changed?: ReadonlySet<string>;
}

/** One piece of text handed to the kernel, e.g. `iptables-restore` input or an `nft -f` file. */
export interface Artifact {
  /** 'iptables-restore' | 'ip6tables-restore' | 'nft' | 'ipvs' | 'ipset' */
  readonly kind: string;
  /** The whole text (of a chunked artifact: joined when first read). */
  readonly text: string;
  /**
   * When present, the text as consecutive pieces, each ending with a newline: a writer that
   * can take them one after another (a tool's stdin) needs no flat copy of a large text.
   * Such an artifact's `text` is a getter: pass artifacts on, do not spread or clone them.
   */
  readonly chunks?: readonly string[];
}

export interface SyncResult {
  readonly full: boolean;
  /** In the order they must be applied. */
  readonly artifacts: readonly Artifact[];
  /** Chain / set / map / virtual-server name → origin, for every object of the whole state. */
  readonly origins: ReadonlyMap<string, RuleOrigin>;
}

export interface Proxier {
  readonly mode: ProxyMode;
  readonly config: ProxierConfig;
  /** Compile this sync. Must be followed by `commit(true|false)` once the apply is known. */
  sync(input: SyncInput): SyncResult;
  /**
   * Tell the backend whether the last sync's artifacts were applied. After a failure the next
   * sync is full (as upstream: a failed restore forces a full resync).
   */
  commit(applied: boolean): void;
}
