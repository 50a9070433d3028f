// The network configuration a plugin receives on stdin, parsed and checked (cni.md §1.2, §2.1,
// §3.1). Unknown keys pass through untouched (the spec requires it).

import { CNI_CODES, CniError, compareVersions, goQuoteList, isSupported, SUPPORTED_VERSIONS } from './spec.js';
import { parseCIDR, parseIP } from '../api/net.js';
import { ifNameProblem } from './if-name.js';
import { canonicalizeRange, type RangeConfig } from './ipam/range.js';

const NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

export interface IpamConf {
  readonly type: string;
  readonly ranges: RangeConfig[][];
  readonly routes: { dst: string; gw?: string }[];
  readonly dataDir?: string;
}

export interface BridgeConf {
  readonly cniVersion: string;
  readonly name: string;
  readonly type: string;
  readonly bridge: string;
  readonly isGateway: boolean;
  readonly isDefaultGateway: boolean;
  readonly forceAddress: boolean;
  readonly ipMasq: boolean;
  readonly hairpinMode: boolean;
  readonly promiscMode: boolean;
  readonly mtu: number;
  readonly ipam?: IpamConf;
  readonly prevResult?: Record<string, unknown>;
  readonly runtimeConfig?: Record<string, unknown>;
  readonly args?: { cni?: { ips?: string[] } };
  /** GC: the attachments that are still valid. */
  readonly validAttachments?: { containerID: string; ifname: string }[];
  readonly raw: Record<string, unknown>;
}

/** Decodes stdin into an object; the first checks of skel (JSON, name). */
export function decodeConfig(stdin: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(stdin);
  } catch (e) {
    const why = stdin.trim() === '' ? 'unexpected end of JSON input' : (e as Error).message;
    throw new CniError(CNI_CODES.decodingFailure, `error unmarshall network config: ${why}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new CniError(CNI_CODES.decodingFailure, 'error unmarshall network config: not a JSON object');
  }
  const raw = doc as Record<string, unknown>;
  const name = raw.name;
  if (name === undefined || name === '') throw new CniError(CNI_CODES.invalidNetworkConfig, 'missing network name');
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new CniError(CNI_CODES.invalidNetworkConfig, 'invalid characters found in network name', String(name));
  }
  return raw;
}

/** A config without cniVersion is 0.1.0; an unsupported one is code 1 with the supported list. */
export function configVersion(raw: Record<string, unknown>): string {
  const v = raw.cniVersion ?? '0.1.0';
  if (typeof v !== 'string') throw new CniError(CNI_CODES.decodingFailure, 'error decoding cniVersion: not a string');
  if (!isSupported(v)) {
    throw new CniError(
      CNI_CODES.incompatibleVersion,
      'incompatible CNI versions',
      `config is ${JSON.stringify(v)}, plugin supports ${goQuoteList(SUPPORTED_VERSIONS)}`,
    );
  }
  return v;
}

/** Verbs newer than the config's version are refused (CHECK ≥ 0.4.0, GC/STATUS ≥ 1.1.0). */
export function requireVersionFor(verb: 'CHECK' | 'GC' | 'STATUS', v: string): void {
  const min = verb === 'CHECK' ? '0.4.0' : '1.1.0';
  if (compareVersions(v, min) < 0) {
    throw new CniError(CNI_CODES.incompatibleVersion, `config version does not allow ${verb}`);
  }
}

/** Code 7 (invalid network configuration) naming the field. */
function invalidField(field: string, msg: string, details?: string): CniError {
  return new CniError(CNI_CODES.invalidNetworkConfig, `${field}: ${msg}`, details);
}

/** The kernel's MTU bounds for a bridge and its veths (ETH_MIN_MTU, ETH_MAX_MTU); 0 is unset. */
const MTU_MIN = 68;
const MTU_MAX = 65535;

/**
 * The bridge plugin's fields, every one that reaches a command checked before any side effect
 * (code 7 naming the field): interface names as the kernel takes them, mtu, booleans, and the
 * IPAM ranges, gateways and routes.
 */
export function parseBridgeConf(raw: Record<string, unknown>, version: string): BridgeConf {
  const bool = (k: string): boolean => {
    const v = raw[k];
    if (v === undefined) return false;
    if (typeof v !== 'boolean') throw new CniError(CNI_CODES.invalidNetworkConfig, `${k} must be a boolean`);
    return v;
  };
  const conf: BridgeConf = {
    cniVersion: version,
    name: raw.name as string,
    type: String(raw.type ?? ''),
    bridge: parseBridgeName(raw.bridge),
    isGateway: bool('isGateway') || bool('isDefaultGateway'),
    isDefaultGateway: bool('isDefaultGateway'),
    forceAddress: bool('forceAddress'),
    ipMasq: bool('ipMasq'),
    hairpinMode: bool('hairpinMode'),
    promiscMode: bool('promiscMode'),
    mtu: parseMtu(raw.mtu),
    ipam: parseIpam(raw.ipam),
    prevResult: raw.prevResult as Record<string, unknown> | undefined,
    runtimeConfig: raw.runtimeConfig as Record<string, unknown> | undefined,
    args: parseArgs(raw.args),
    validAttachments: parseAttachments(raw['cni.dev/valid-attachments'] ?? raw['cni.dev/attachments']),
    raw,
  };
  if (conf.hairpinMode && conf.promiscMode) {
    throw new CniError(CNI_CODES.internal, 'cannot set hairpin mode and promiscuous mode at the same time.');
  }
  return conf;
}

function parseBridgeName(v: unknown): string {
  if (v === undefined || v === null || v === '') return 'cni0';
  if (typeof v !== 'string') throw invalidField('bridge', 'must be a string');
  const p = ifNameProblem(v);
  if (p) throw invalidField('bridge', `${JSON.stringify(v)}: ${p.msg}`, p.details);
  return v;
}

function parseMtu(v: unknown): number {
  if (v === undefined || v === null || v === 0) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < MTU_MIN || v > MTU_MAX) {
    throw invalidField('mtu', `must be an integer from ${MTU_MIN} to ${MTU_MAX} (0 or unset: ` +
      `the kernel's default), got ${JSON.stringify(v)}`);
  }
  return v;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function optionalString(o: Record<string, unknown>, k: string, field: string): string | undefined {
  const v = o[k];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw invalidField(field, 'must be a string');
  return v;
}

function parseIpam(v: unknown): IpamConf | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw invalidField('ipam', 'must be an object');
  const o = v;
  if (o.type !== undefined && o.type !== null && typeof o.type !== 'string') {
    throw invalidField('ipam.type', 'must be a string');
  }
  if (typeof o.type !== 'string' || o.type === '') return undefined;
  const dataDir = optionalString(o, 'dataDir', 'ipam.dataDir');
  let ranges: RangeConfig[][];
  if (o.ranges !== undefined && o.ranges !== null &&
    !(Array.isArray(o.ranges) && o.ranges.length === 0)) {
    ranges = parseRangeSets(o.ranges);
  } else if (o.subnet !== undefined) {
    ranges = [[parseRange(o, 'ipam')]];
  } else {
    ranges = [];
  }
  return { type: o.type, ranges, routes: parseRoutes(o.routes), dataDir };
}

function parseRangeSets(v: unknown): RangeConfig[][] {
  if (!Array.isArray(v)) throw invalidField('ipam.ranges', 'must be a list of range lists');
  return v.map((set, i) => {
    const f = `ipam.ranges[${i}]`;
    if (!Array.isArray(set) || set.length === 0) {
      throw invalidField(f, 'must be a non-empty list of ranges');
    }
    return set.map((r, j) => parseRange(r, `${f}[${j}]`));
  });
}

/** One host-local range, checked as host-local's Canonicalize checks it (pure, no I/O). */
function parseRange(v: unknown, field: string): RangeConfig {
  if (!isRecord(v)) throw invalidField(field, 'must be an object');
  const subnet = optionalString(v, 'subnet', `${field}.subnet`);
  if (subnet === undefined) throw invalidField(`${field}.subnet`, 'Required value');
  const r: RangeConfig = { subnet };
  for (const k of ['rangeStart', 'rangeEnd', 'gateway'] as const) {
    const s = optionalString(v, k, `${field}.${k}`);
    if (s !== undefined) r[k] = s;
  }
  try {
    canonicalizeRange(r);
  } catch (e) {
    throw invalidField(field, (e as Error).message);
  }
  return r;
}

function parseRoutes(v: unknown): IpamConf['routes'] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidField('ipam.routes', 'must be a list');
  return v.map((r, i) => {
    const f = `ipam.routes[${i}]`;
    if (!isRecord(r)) throw invalidField(f, 'must be an object');
    const dst = optionalString(r, 'dst', `${f}.dst`);
    const cidr = dst === undefined ? null : parseCIDR(dst);
    if (!cidr) throw invalidField(`${f}.dst`, `invalid CIDR address: ${String(dst ?? '')}`);
    const gw = optionalString(r, 'gw', `${f}.gw`);
    if (gw !== undefined && parseIP(gw)?.family !== cidr.family) {
      throw invalidField(`${f}.gw`, `invalid ${cidr.family} gateway address: ${gw}`);
    }
    return gw === undefined ? { dst } : { dst: dst!, gw };
  }) as IpamConf['routes'];
}

/** `args.cni.ips`: the IPs a runtime asks for (host-local), each an address or address/prefix. */
function parseArgs(v: unknown): BridgeConf['args'] {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw invalidField('args', 'must be an object');
  const cni = v.cni;
  if (cni === undefined || cni === null) return v as BridgeConf['args'];
  if (!isRecord(cni)) throw invalidField('args.cni', 'must be an object');
  const ips = cni.ips;
  if (ips === undefined || ips === null) return v as BridgeConf['args'];
  if (!Array.isArray(ips)) throw invalidField('args.cni.ips', 'must be a list');
  ips.forEach((ip, i) => {
    const text = typeof ip === 'string' ? ip : undefined;
    if (text === undefined || !(parseIP(text) || parseCIDR(text))) {
      throw invalidField(`args.cni.ips[${i}]`, `invalid IP address: ${JSON.stringify(ip)}`);
    }
  });
  return v as BridgeConf['args'];
}

function parseAttachments(v: unknown): BridgeConf['validAttachments'] {
  if (!Array.isArray(v)) return undefined;
  return v.map((a: Record<string, unknown>) => ({ containerID: String(a.containerID), ifname: String(a.ifname) }));
}
