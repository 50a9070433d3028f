// The ADD result in the shape each spec version prints (cni.md §1.6, §4.8).

import { compareVersions } from './spec.js';

export interface CniInterface {
  readonly name: string;
  readonly mac?: string;
  readonly sandbox?: string;
}

export interface CniIP {
  readonly interface?: number;
  /** `ip/prefix` */
  readonly address: string;
  readonly gateway?: string;
}

export interface CniRoute {
  readonly dst: string;
  readonly gw?: string;
}

export interface CniResult {
  readonly interfaces: readonly CniInterface[];
  readonly ips: readonly CniIP[];
  readonly routes: readonly CniRoute[];
  readonly dns: Record<string, unknown>;
}

const isV6 = (cidr: string) => cidr.includes(':');

/** Converts the current (1.x) result to the wire form of `version`. */
export function resultForVersion(r: CniResult, version: string): Record<string, unknown> {
  if (compareVersions(version, '0.3.0') < 0) return legacyResult(r, version);
  const ips = r.ips.map((ip) => {
    const base = { ...(ip.interface !== undefined ? { interface: ip.interface } : {}), address: ip.address };
    const withGw = ip.gateway ? { ...base, gateway: ip.gateway } : base;
    return compareVersions(version, '1.0.0') < 0 ? { version: isV6(ip.address) ? '6' : '4', ...withGw } : withGw;
  });
  return {
    cniVersion: version,
    ...(r.interfaces.length > 0 ? { interfaces: r.interfaces } : {}),
    ...(ips.length > 0 ? { ips } : {}),
    ...(r.routes.length > 0 ? { routes: r.routes } : {}),
    dns: r.dns,
  };
}

function legacyResult(r: CniResult, version: string): Record<string, unknown> {
  const fam = (v6: boolean) => {
    const ip = r.ips.find((i) => isV6(i.address) === v6);
    if (!ip) return undefined;
    const routes = r.routes.filter((rt) => isV6(rt.dst) === v6);
    return { ip: ip.address, ...(ip.gateway ? { gateway: ip.gateway } : {}), ...(routes.length ? { routes } : {}) };
  };
  const ip4 = fam(false);
  const ip6 = fam(true);
  return { cniVersion: version, ...(ip4 ? { ip4 } : {}), ...(ip6 ? { ip6 } : {}), dns: r.dns };
}

/** Reads a prevResult of any version back into the 1.x shape (for CHECK). */
export function parsePrevResult(prev: Record<string, unknown>): CniResult {
  return {
    interfaces: (prev.interfaces as CniInterface[] | undefined) ?? [],
    ips: (prev.ips as CniIP[] | undefined) ?? [],
    routes: (prev.routes as CniRoute[] | undefined) ?? [],
    dns: (prev.dns as Record<string, unknown> | undefined) ?? {},
  };
}
