// KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1, also the v1alpha2 top-level sync
// periods) → one validated, defaulted ProxierConfig per IP family, as upstream kube-proxy's
// defaulting, validation and proxier construction. Facts that kube-proxy learns from the host
// (node IPs, `--random-fully`, nfacct) are given by the caller so an offline compile is exact.
// Every problem is a KDP_CONFIG error naming the field.

import { isIP } from 'node:net';
import { parse as parseYAML } from 'yaml';
import { canonicalIP, cidrContains, formatCIDR, parseCIDR, parseIP } from '../api/net.js';
import { kdpError } from '../errors.js';
import { goDurationMs } from '../util/go-duration.js';
import type { DetectLocal, ProxierConfig, ProxyMode } from './backend.js';
import { DEFAULT_PROXY_MODE, isProxyMode, proxyMode, proxyModeNames } from './registry.js';
import type { IPFamily } from './types.js';

/** What the caller knows about the node and host. */
export interface NodeFacts {
  readonly nodeName: string;
  /** The node's IPs (any family, primary first). */
  readonly nodeIPs: readonly string[];
  /** Node spec.podCIDRs, for detectLocalMode NodeCIDR. */
  readonly podCIDRs?: readonly string[];
  /** Node labels (`topology.kubernetes.io/zone` is used for topology hints). */
  readonly labels?: Readonly<Record<string, string>>;
  readonly capabilities?: { readonly randomFully?: boolean; readonly nfacct?: boolean };
  /** Overrides the config's mode (the CLI's `--mode`). */
  readonly mode?: ProxyMode;
}

/** The parsed file, before it is split by family. */
export interface KubeProxySettings {
  readonly mode: ProxyMode;
  readonly hostnameOverride: string;
  readonly clusterCIDRs: readonly string[];
  readonly detectLocalMode: DetectLocal['mode'];
  readonly bridgeInterface: string;
  /** Where `/metrics` is served (upstream default 127.0.0.1:10249; port 0: not served). */
  readonly metricsBindAddress: { readonly host: string; readonly port: number };
  readonly interfaceNamePrefix: string;
  readonly masqueradeBit: number;
  readonly masqueradeAll: boolean;
  readonly localhostNodePorts: boolean;
  readonly nodePortAddresses: readonly string[];
  readonly syncPeriodMs: number;
  readonly minSyncPeriodMs: number;
  readonly ipvsScheduler: string;
  readonly ipvsStrictARP: boolean;
  readonly featureGates: Readonly<Record<string, boolean>>;
  /** `conntrack` (upstream defaults: maxPerCore 32768, min 131072, 24h, 1h); see sysctls.ts. */
  readonly conntrack: ConntrackSettings;
}

export interface ConntrackSettings {
  readonly maxPerCore: number;
  readonly min: number;
  /** Seconds; 0: left alone. */
  readonly tcpEstablishedTimeoutS: number;
  readonly tcpCloseWaitTimeoutS: number;
}

const KNOWN_FIELDS = new Set([
  'apiVersion', 'kind', 'bindAddress', 'healthzBindAddress', 'metricsBindAddress',
  'bindAddressHardFail', 'enableProfiling', 'clusterCIDR', 'hostnameOverride',
  'clientConnection', 'winkernel', 'mode', 'portRange',
  'conntrack', 'configSyncPeriod', 'nodePortAddresses', 'oomScoreAdj', 'detectLocalMode',
  'detectLocal', 'showHiddenMetricsForVersion', 'featureGates', 'logging',
  'windowsRunAsService', 'syncPeriod', 'minSyncPeriod', 'ipFamilies',
]);
/** Upstream's fields plus each mode's own section (iptables, ipvs, nftables). */
const isKnownField = (k: string) =>
  KNOWN_FIELDS.has(k) || proxyModeNames().some((m) => proxyMode(m).configSection === k);
const badMode = (): never => bad('mode', `must be one of ${proxyModeNames().join(', ')}`);
const DETECT_MODES = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'];
const IPVS_SCHEDULERS = ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'sh', 'dh', 'sed', 'nq',
  'mh'];

function bad(field: string, message: string): never {
  throw kdpError('KDP_CONFIG', `KubeProxyConfiguration ${field}: ${message}`, {
    kind: 'KubeProxyConfiguration',
    causes: [{ field, reason: 'FieldValueInvalid', message }],
  });
}

/** Go time.ParseDuration (`1m30s`, `500ms`, `0`) → milliseconds. */
export function parseGoDuration(text: string, field: string): number {
  const ms = goDurationMs(text);
  return ms ?? bad(field, `invalid duration ${JSON.stringify(text)}`);
}

type Obj = Record<string, unknown>;

function section(o: Obj, key: string): Obj {
  const v = o[key];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) bad(key, 'must be an object');
  return v as Obj;
}

function str(o: Obj, key: string, field: string, dflt: string): string {
  const v = o[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'string') bad(field, 'must be a string');
  return v;
}

function bool(o: Obj, key: string, field: string, dflt: boolean): boolean {
  const v = o[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') bad(field, 'must be a boolean');
  return v;
}

function duration(o: Obj, key: string, field: string, dflt: number): number {
  const v = o[key];
  if (v === undefined || v === null || v === '') return dflt;
  if (typeof v !== 'string') bad(field, 'must be a duration string such as "30s"');
  return parseGoDuration(v, field);
}

function nonNegativeInt(o: Obj, key: string, field: string, dflt: number): number {
  const v = o[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) bad(field, 'must be a non-negative integer');
  return v;
}

function parseConntrack(o: Obj): ConntrackSettings {
  const ct = section(o, 'conntrack');
  const seconds = (key: string, dflt: number) =>
    Math.floor(duration(ct, key, `conntrack.${key}`, dflt * 1000) / 1000);
  return {
    maxPerCore: nonNegativeInt(ct, 'maxPerCore', 'conntrack.maxPerCore', 32768),
    min: nonNegativeInt(ct, 'min', 'conntrack.min', 131072),
    tcpEstablishedTimeoutS: seconds('tcpEstablishedTimeout', 86400),
    tcpCloseWaitTimeoutS: seconds('tcpCloseWaitTimeout', 3600),
  };
}

function masqBit(o: Obj, field: string): number {
  const v = o.masqueradeBit;
  if (v === undefined || v === null) return 14;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 31) {
    bad(field, 'must be in the range [0, 31]');
  }
  return v;
}

function parseClusterCIDRs(text: string): string[] {
  if (text.trim() === '') return [];
  const parts = text.split(',').map((s) => s.trim());
  const seen = new Set<IPFamily>();
  return parts.map((p) => {
    const c = parseCIDR(p);
    if (!c) bad('clusterCIDR', `must be a valid CIDR block or comma-separated list, got ${p}`);
    if (seen.has(c.family)) bad('clusterCIDR', 'may contain at most one CIDR per IP family');
    seen.add(c.family);
    return formatCIDR(c);
  });
}

function parseNodePortAddresses(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) bad('nodePortAddresses', 'must be a list');
  return v.map((s, i) => {
    const f = `nodePortAddresses[${i}]`;
    if (s === 'primary') {
      if (v.length > 1) bad(f, 'can\'t use "primary" together with CIDRs');
      return s;
    }
    const c = typeof s === 'string' ? parseCIDR(s) : null;
    if (!c) bad(f, 'must be a valid CIDR');
    return formatCIDR(c);
  });
}

function featureGates(o: Obj): Record<string, boolean> {
  const fg = section(o, 'featureGates');
  for (const [k, v] of Object.entries(fg)) {
    if (typeof v !== 'boolean') bad(`featureGates.${k}`, 'must be a boolean');
  }
  return fg as Record<string, boolean>;
}

/** Parses and validates the file (empty text = all defaults). */
export function parseKubeProxyConfiguration(text: string | undefined): KubeProxySettings {
  let doc: unknown;
  try {
    doc = text === undefined || text.trim() === '' ? {} : parseYAML(text);
  } catch (e) {
    throw kdpError('KDP_CONFIG', `KubeProxyConfiguration: invalid YAML: ${(e as Error).message}`);
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== 'object' || Array.isArray(doc)) bad('(root)', 'must be a mapping');
  const o = doc as Obj;
  if (o.kind !== undefined && o.kind !== 'KubeProxyConfiguration') {
    bad('kind', 'must be KubeProxyConfiguration');
  }
  if (o.apiVersion !== undefined && !String(o.apiVersion).startsWith('kubeproxy.config.k8s.io/')) {
    bad('apiVersion', 'must be kubeproxy.config.k8s.io/v1alpha1');
  }
  for (const k of Object.keys(o)) if (!isKnownField(k)) bad(k, 'unknown field');
  // Every mode's section must be an object, whichever mode runs.
  for (const m of proxyModeNames()) section(o, proxyMode(m).configSection);
  const ipt = section(o, 'iptables');
  const ipvs = section(o, 'ipvs');
  const mode = (str(o, 'mode', 'mode', '') || DEFAULT_PROXY_MODE) as ProxyMode;
  if (!isProxyMode(mode)) badMode();
  const entry = proxyMode(mode);
  // The mode's own section (syncPeriod, ...) and the one its masquerade settings come from.
  const subName = entry.configSection;
  const sub = section(o, subName);
  const masqName = entry.masqueradeSection;
  const masq = section(o, masqName);
  const syncTop = duration(o, 'syncPeriod', 'syncPeriod', 30_000);
  const minTop = duration(o, 'minSyncPeriod', 'minSyncPeriod', 1_000);
  const syncPeriodMs = duration(sub, 'syncPeriod', `${subName}.syncPeriod`, syncTop);
  const minSyncPeriodMs = duration(sub, 'minSyncPeriod', `${subName}.minSyncPeriod`, minTop);
  if (syncPeriodMs <= 0) bad(`${subName}.syncPeriod`, 'must be greater than 0');
  if (minSyncPeriodMs < 0) bad(`${subName}.minSyncPeriod`, 'must be greater than or equal to 0');
  const detectLocalMode = (str(o, 'detectLocalMode', 'detectLocalMode', '') || 'ClusterCIDR');
  if (!DETECT_MODES.includes(detectLocalMode)) {
    bad('detectLocalMode', `must be one of ${DETECT_MODES.join(', ')}`);
  }
  const dl = section(o, 'detectLocal');
  const bridgeInterface = str(dl, 'bridgeInterface', 'detectLocal.bridgeInterface', '');
  const interfaceNamePrefix = str(dl, 'interfaceNamePrefix', 'detectLocal.interfaceNamePrefix', '');
  if (detectLocalMode === 'BridgeInterface' && bridgeInterface === '') {
    bad('detectLocal.bridgeInterface', 'must be set with detectLocalMode BridgeInterface');
  }
  if (detectLocalMode === 'InterfaceNamePrefix' && interfaceNamePrefix === '') {
    bad('detectLocal.interfaceNamePrefix', 'must be set with detectLocalMode InterfaceNamePrefix');
  }
  const metricsText = str(o, 'metricsBindAddress', 'metricsBindAddress', '') || '127.0.0.1:10249';
  const mm = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(metricsText);
  if (!mm || Number(mm[3]) > 65535 || isIP(mm[1] ?? mm[2]!) === 0) {
    bad('metricsBindAddress', `must be IP:port (e.g. 127.0.0.1:10249), not ${JSON.stringify(metricsText)}`);
  }
  const metricsBindAddress = { host: mm?.[1] ?? mm?.[2] ?? '127.0.0.1', port: Number(mm?.[3] ?? 10249) };
  const scheduler = str(ipvs, 'scheduler', 'ipvs.scheduler', '') || 'rr';
  if (!IPVS_SCHEDULERS.includes(scheduler)) bad('ipvs.scheduler', `unknown scheduler ${scheduler}`);
  return {
    mode,
    hostnameOverride: str(o, 'hostnameOverride', 'hostnameOverride', ''),
    clusterCIDRs: parseClusterCIDRs(str(o, 'clusterCIDR', 'clusterCIDR', '')),
    detectLocalMode: detectLocalMode as DetectLocal['mode'],
    bridgeInterface,
    metricsBindAddress,
    interfaceNamePrefix,
    masqueradeBit: masqBit(masq, `${masqName}.masqueradeBit`),
    masqueradeAll: bool(masq, 'masqueradeAll', `${masqName}.masqueradeAll`, false),
    localhostNodePorts: bool(ipt, 'localhostNodePorts', 'iptables.localhostNodePorts', true),
    nodePortAddresses: parseNodePortAddresses(o.nodePortAddresses),
    syncPeriodMs,
    minSyncPeriodMs,
    ipvsScheduler: scheduler,
    ipvsStrictARP: bool(ipvs, 'strictARP', 'ipvs.strictARP', false),
    featureGates: featureGates(o),
    conntrack: parseConntrack(o),
  };
}

function detectLocalFor(s: KubeProxySettings, family: IPFamily, node: NodeFacts): DetectLocal {
  const ofFamily = (cidrs: readonly string[]) =>
    cidrs.map((c) => parseCIDR(c)).filter((c) => c?.family === family).map((c) => formatCIDR(c!));
  switch (s.detectLocalMode) {
    case 'ClusterCIDR': {
      const cidrs = ofFamily(s.clusterCIDRs).slice(0, 1);
      return cidrs.length ? { mode: 'ClusterCIDR', cidrs } : { mode: 'None', cidrs: [] };
    }
    case 'NodeCIDR': {
      const cidrs = ofFamily(node.podCIDRs ?? []).slice(0, 1);
      return cidrs.length ? { mode: 'NodeCIDR', cidrs } : { mode: 'None', cidrs: [] };
    }
    case 'BridgeInterface':
      return { mode: 'BridgeInterface', cidrs: [], interfaceName: s.bridgeInterface };
    default:
      return { mode: 'InterfaceNamePrefix', cidrs: [], interfaceName: s.interfaceNamePrefix };
  }
}

/**
 * nodePortAddresses for one family, as upstream NewNodePortAddresses: CIDRs of the family;
 * none (or a zero CIDR) = match all ([]); "primary" = the node's primary IP of the family as
 * /32|/128 (none for loopback). nftables mode defaults an empty list to "primary"
 * (upstream platformApplyDefaults).
 */
function nodePortAddressesFor(s: KubeProxySettings, family: IPFamily,
  nodeIPs: readonly string[], mode: ProxyMode): string[] {
  let cidrs: string[];
  const list = s.nodePortAddresses.length === 0 ? proxyMode(mode).defaultNodePortAddresses : s.nodePortAddresses;
  if (list[0] === 'primary') {
    const primary = nodeIPs[0];
    const loopback = primary !== undefined && (primary === '::1' || primary.startsWith('127.'));
    cidrs = primary === undefined || loopback ? [] : [`${primary}/${family === 'IPv4' ? 32 : 128}`];
    return cidrs;
  } else {
    cidrs = s.nodePortAddresses.filter((c) => parseCIDR(c)?.family === family);
  }
  if (cidrs.some((c) => c.endsWith('/0'))) return [];
  return cidrs;
}

/** Upstream ContainsIPv4Loopback: match-all, or an IPv4 CIDR in or containing 127.0.0.0/8. */
function containsIPv4Loopback(cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  return cidrs.some((c) => {
    const p = parseCIDR(c);
    return p?.family === 'IPv4' && ((p.base >> 24n) === 127n || cidrContains(p, '127.0.0.1'));
  });
}

/** The families a node runs proxiers for: those of its IPs (IPv4 when none are given). */
export function familiesOf(nodeIPs: readonly string[]): IPFamily[] {
  const fams = new Set<IPFamily>();
  for (const ip of nodeIPs) {
    const p = parseIP(ip);
    if (!p) bad('nodeIPs', `invalid IP ${JSON.stringify(ip)}`);
    fams.add(p.family);
  }
  if (fams.size === 0) fams.add('IPv4');
  return (['IPv4', 'IPv6'] as IPFamily[]).filter((f) => fams.has(f));
}

/** One ProxierConfig per family the node has (IPv4 first). */
export function buildProxierConfigs(s: KubeProxySettings, node: NodeFacts,
  serviceCIDRs: readonly string[]): ProxierConfig[] {
  const mode = node.mode ?? s.mode;
  if (!isProxyMode(mode)) badMode();
  return familiesOf(node.nodeIPs).map((family) => {
    const nodeIPs = node.nodeIPs.filter((ip) => parseIP(ip)?.family === family)
      .map((ip) => canonicalIP(ip)!);
    const npa = nodePortAddressesFor(s, family, nodeIPs, mode);
    const localhostNodePorts = family === 'IPv4' && s.localhostNodePorts &&
      containsIPv4Loopback(npa);
    return {
      mode,
      family,
      nodeName: node.nodeName || s.hostnameOverride,
      nodeIPs,
      detectLocal: detectLocalFor(s, family, node),
      masqueradeBit: s.masqueradeBit,
      masqueradeAll: s.masqueradeAll,
      localhostNodePorts,
      nodePortAddresses: npa,
      serviceCIDRs: serviceCIDRs.filter((c) => parseCIDR(c)?.family === family),
      minSyncPeriodMs: s.minSyncPeriodMs,
      syncPeriodMs: s.syncPeriodMs,
      ipvsScheduler: s.ipvsScheduler,
      ipvsStrictARP: s.ipvsStrictARP,
      nodeZone: node.labels?.['topology.kubernetes.io/zone'] ?? '',
      featureGates: s.featureGates,
      capabilities: {
        randomFully: node.capabilities?.randomFully ?? false,
        nfacct: node.capabilities?.nfacct ?? false,
      },
    };
  });
}
