// The ipvs proxier (upstream pkg/proxy/ipvs/proxier.go). Every sync is full: it recomputes all
// virtual servers, ipset entries and the (set-driven) iptables restore input, and applies only
// the differences to IPVS (add/update/delete virtual servers, add/graceful-delete real servers),
// the ipsets (del/add entries) and kube-ipvs0 (bind/unbind). kdp keeps a model of that kernel
// state; the artifacts describe the whole resulting state, `lastOperations` the incremental work.
//
// Artifacts, in apply order: `ipvs` (`ipvsadm -Sn` text), `ipset` (`ipset restore` input, which
// is also `ipset save` text), `iptables-restore`/`ip6tables-restore` (`--noflush` input), and
// `kube-ipvs0` (addresses on the dummy device, one `ip/prefix` a line).

import { hostPrefix, sortAddresses } from '../../ruleset/ipvs/addresses.js';
import { formatIpsetSave } from '../../ruleset/ipvs/ipset.js';
import { SECTION_HEADERS } from '../../ruleset/ipvs/state-text.js';
import type { IpvsTable } from '../../ruleset/ipvs/types.js';
import { cidrContains } from '../../api/net.js';
import type {
  Artifact, Proxier, ProxierConfig, SyncInput, SyncResult,
} from '../backend.js';
import { topologyContextOf } from '../topology.js';
import { GracefulTermination, type ConnectionCounter } from './graceful-termination.js';
import { ActiveIpSets, byteOrder, IPSET_INFO, ipsetName, KUBE_IPVS_IPS } from './ipset.js';
import { masqueradeMark, writeIptablesRules, type NoNodeAccessEntry } from './iptables-rules.js';
import { formatOp, IpvsModel, type IpvsOp } from './ipvs-model.js';
import { addressOps, nodeAddressSet } from './netlink.js';
import { IpvsOrigins } from './origins.js';
import { syncServicePort, type SyncContext } from './service-port.js';
import { TextSink } from '../text-sink.js';
import { textArtifact } from '../artifact.js';

/** Host facts beyond ProxierConfig; all optional, defaults fit an offline compile. */
export interface IpvsHostOptions {
  /** Addresses on the node's interfaces other than kube-ipvs0; default `config.nodeIPs`. */
  readonly hostAddresses?: readonly string[];
  /** Connection counts for graceful termination; default: no connections. */
  readonly connections?: ConnectionCounter;
  /** Mark string; default Go's `%#08x` of `1 << masqueradeBit` (`0x00004000`). */
  readonly masqueradeMark?: string;
  /** IPVS table found at start (a kube-proxy restart); default empty. */
  readonly initialIpvs?: IpvsTable;
  /** Addresses found on kube-ipvs0 at start (bare IPs); default none. */
  readonly initialAddresses?: readonly string[];
}

/** The ipvs Proxier, with the incremental work of its last sync. */
export interface IpvsProxier extends Proxier {
  /**
   * Commands of the last sync in upstream's order: `ipvsadm` lines (`-A/-E/-D/-a/-e/-d`),
   * `ip addr add|del ... dev kube-ipvs0`, `ipset add|del`. Empty before the first sync.
   */
  lastOperations(): readonly string[];
  /** Upstream's minutely graceful-termination pass: delete quiesced real servers now idle. */
  flushGracefulTermination(): readonly string[];
}

interface KernelState {
  readonly ipvs: IpvsModel;
  readonly graceful: GracefulTermination;
  readonly bound: ReadonlySet<string>;
  readonly sets: ReadonlyMap<string, ReadonlySet<string>>;
}

const ARTIFACT_HEADERS: Record<string, string> = {
  ipvs: SECTION_HEADERS[0], ipset: SECTION_HEADERS[1], 'iptables-restore': SECTION_HEADERS[2],
  'ip6tables-restore': SECTION_HEADERS[2], 'kube-ipvs0': SECTION_HEADERS[3],
};

/** One artifact as its `ipvs.golden` section (header line + text); the join is the golden. */
export function canonicalize(artifact: Artifact): string {
  const header = ARTIFACT_HEADERS[artifact.kind];
  return header === undefined ? artifact.text : `${header}\n${artifact.text}`;
}

/** Upstream nodeIPs for node-port virtual servers. */
function nodePortIPs(config: ProxierConfig, nodeAddresses: ReadonlySet<string>): string[] {
  if (config.nodePortAddresses.length === 0) return [...nodeAddresses];
  return [...nodeAddresses].filter((ip) =>
    config.nodePortAddresses.some((c) => cidrContains(c, ip)));
}

export function buildProxier(config: ProxierConfig, host: IpvsHostOptions = {}): IpvsProxier {
  const connections = host.connections ?? (() => 0);
  const mark = host.masqueradeMark ?? masqueradeMark(config.masqueradeBit);
  const scheduler = config.ipvsScheduler === '' ? 'rr' : config.ipvsScheduler;
  let state: KernelState = {
    ipvs: host.initialIpvs ? IpvsModel.from(host.initialIpvs) : new IpvsModel(),
    graceful: new GracefulTermination(connections),
    bound: new Set(host.initialAddresses ?? []), sets: new Map(),
  };
  let pending: KernelState | undefined;
  /** The ipvsadm text is written here; its memory is reused by every sync. */
  const sink = new TextSink();
  let initialSync = true;
  let ops: IpvsOp[] = [];
  let opsText: string[] | undefined;

  const sync = function ipvsSync(input: SyncInput): SyncResult {
    const ipvs = state.ipvs.clone();
    const graceful = state.graceful.clone();
    const sets = new ActiveIpSets();
    const nodeAddresses = nodeAddressSet(host.hostAddresses ?? config.nodeIPs, config.family);
    const hasNodePort = [...input.services.values()].some((s) => s.nodePort !== 0);
    const ctx: SyncContext = {
      ipvs, graceful, sets, scheduler,
      topology: topologyContextOf(config),
      nodeIP: config.nodeIPs[0],
      nodeAddresses,
      nodePortIPs: hasNodePort ? nodePortIPs(config, nodeAddresses) : [],
      initialSync,
      alreadyBound: state.bound,
      activeServices: new Set(), activeBindAddrs: new Set(),
      lbNoNodeAccess: [] as NoNodeAccessEntry[],
      origins: new Map<string, string>(),
    };
    for (const key of [...input.services.keys()].sort(byteOrder)) {
      syncServicePort(ctx, input.services.get(key)!, input.endpoints.get(key) ?? []);
    }
    const syncOps = ipvs.takeOps();
    sets.replace(KUBE_IPVS_IPS, ctx.activeBindAddrs);
    append(syncOps, ipsetOps(state.sets, sets, config));
    const iptables = writeIptablesRules({ config, sets, lbNoNodeAccess: ctx.lbNoNodeAccess, mark });
    append(syncOps, addressOps(state.bound, ctx.activeBindAddrs)
      .filter((op) => op.startsWith('ip addr del')));
    for (const key of ipvs.keys()) {
      if (!ctx.activeServices.has(key) && familyOfKey(key) === config.family) {
        ipvs.deleteVirtualServer(key);
      }
    }
    graceful.prune(ipvs);
    append(syncOps, ipvs.takeOps());
    ops = syncOps;
    opsText = undefined;
    initialSync = false;
    pending = {
      ipvs, graceful, bound: new Set(ctx.activeBindAddrs),
      sets: new Map(IPSET_INFO.map((i) => [i.name, new Set(sets.get(i.name))])),
    };
    const artifacts: Artifact[] = [
      textArtifact('ipvs', ipvs.formatSave(sink)),
      { kind: 'ipset', text: formatIpsetSave(sets.toIpSets(config.family)) },
      { kind: config.family === 'IPv6' ? 'ip6tables-restore' : 'iptables-restore', text: iptables },
      { kind: 'kube-ipvs0', text: sortAddresses(ctx.activeBindAddrs).map(hostPrefix).join('\n') +
        (ctx.activeBindAddrs.size > 0 ? '\n' : '') },
    ];
    return { full: true, artifacts, origins: new IpvsOrigins(ctx.origins, ipvs) };
  };

  return {
    mode: 'ipvs',
    config,
    sync,
    commit(applied: boolean): void {
      if (applied && pending !== undefined) state = pending;
      pending = undefined;
    },
    lastOperations(): readonly string[] {
      opsText ??= ops.map(formatOp);
      return opsText;
    },
    flushGracefulTermination(): readonly string[] {
      state.graceful.flush(state.ipvs);
      return state.ipvs.takeOps().map(formatOp);
    },
  };
}

function familyOfKey(vsKey: string): 'IPv4' | 'IPv6' {
  return vsKey.startsWith('[') ? 'IPv6' : 'IPv4';
}

/** Upstream syncIPSetEntries per set, in list order: deletions then additions, each sorted. */
function ipsetOps(before: ReadonlyMap<string, ReadonlySet<string>>, now: ActiveIpSets,
  config: ProxierConfig): string[] {
  const ops: string[] = [];
  for (const info of IPSET_INFO) {
    const prev = before.get(info.name) ?? new Set<string>();
    const cur = now.get(info.name);
    const name = ipsetName(info.name, config.family);
    const gone = prev.size === 0 ? [] : [...prev].filter((x) => !cur.has(x)).sort(byteOrder);
    const added = now.sorted(info.name).filter((x) => !prev.has(x));
    for (const e of gone) ops.push(`ipset del ${name} ${e}`);
    for (const e of added) ops.push(`ipset add ${name} ${e}`);
  }
  return ops;
}

function append(to: IpvsOp[], from: readonly (IpvsOp | string)[]): void {
  for (const x of from) to.push(typeof x === 'string' ? { op: 'raw', line: x } : x);
}
