// The network configuration a plugin receives on stdin, parsed and checked (cni.md §1.2, §2.1,
// §3.1). Unknown keys pass through untouched (the spec requires it).

import { CNI_CODES, CniError, compareVersions, goQuoteList, isSupported, SUPPORTED_VERSIONS } from './spec.js';
import type { RangeConfig } from './ipam/range.js';

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
    bridge: typeof raw.bridge === 'string' && raw.bridge !== '' ? raw.bridge : 'cni0',
    isGateway: bool('isGateway') || bool('isDefaultGateway'),
    isDefaultGateway: bool('isDefaultGateway'),
    forceAddress: bool('forceAddress'),
    ipMasq: bool('ipMasq'),
    hairpinMode: bool('hairpinMode'),
    promiscMode: bool('promiscMode'),
    mtu: typeof raw.mtu === 'number' ? raw.mtu : 0,
    ipam: parseIpam(raw.ipam),
    prevResult: raw.prevResult as Record<string, unknown> | undefined,
    runtimeConfig: raw.runtimeConfig as Record<string, unknown> | undefined,
    args: raw.args as BridgeConf['args'],
    validAttachments: parseAttachments(raw['cni.dev/valid-attachments'] ?? raw['cni.dev/attachments']),
    raw,
  };
  if (conf.hairpinMode && conf.promiscMode) {
    throw new CniError(CNI_CODES.internal, 'cannot set hairpin mode and promiscuous mode at the same time.');
  }
  if (Buffer.byteLength(conf.bridge) > 15) {
    throw new CniError(CNI_CODES.invalidNetworkConfig, `bridge name "${conf.bridge}" is longer than 15 characters`);
  }
  return conf;
}

function parseIpam(v: unknown): IpamConf | undefined {
  if (v === undefined || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.type !== 'string' || o.type === '') return undefined;
  let ranges = (o.ranges as RangeConfig[][] | undefined) ?? [];
  if (ranges.length === 0 && typeof o.subnet === 'string') {
    ranges = [[{ subnet: o.subnet, rangeStart: o.rangeStart, rangeEnd: o.rangeEnd, gateway: o.gateway } as RangeConfig]];
  }
  return {
    type: o.type,
    ranges,
    routes: (o.routes as IpamConf['routes'] | undefined) ?? [],
    dataDir: typeof o.dataDir === 'string' ? o.dataDir : undefined,
  };
}

function parseAttachments(v: unknown): BridgeConf['validAttachments'] {
  if (!Array.isArray(v)) return undefined;
  return v.map((a: Record<string, unknown>) => ({ containerID: String(a.containerID), ifname: String(a.ifname) }));
}
