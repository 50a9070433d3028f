// An in-memory IPVS table with the operations upstream's utilipvs.Interface offers. Each change
// is recorded as the `ipvsadm` command that would make it (`-A/-E/-D` virtual servers,
// `-a/-e/-d` real servers), so a sync's incremental work is visible and replayable.

import { formatRealServer, formatVirtualServer, virtualServerKey } from '../../ruleset/ipvs/ipvsadm.js';
import { ipSortKey, joinHostPort } from '../../ruleset/ipvs/address.js';
import type { IpvsTable, RealServer, VirtualServer } from '../../ruleset/ipvs/types.js';

/** A virtual server without its real servers (upstream utilipvs.VirtualServer). */
export type VirtualServerSpec = Omit<VirtualServer, 'realServers'>;

interface Entry {
  spec: VirtualServerSpec;
  reals: Map<string, RealServer>;
}

export const realServerKey = (rs: Pick<RealServer, 'address' | 'port'>): string =>
  joinHostPort(rs.address, rs.port);

function sameSpec(a: VirtualServerSpec, b: VirtualServerSpec): boolean {
  return a.scheduler === b.scheduler && a.persistence === b.persistence &&
    a.schedFlags.join(',') === b.schedFlags.join(',');
}

const byAddressPortProto = (a: VirtualServerSpec, b: VirtualServerSpec): number => {
  const ka = ipSortKey(a.address);
  const kb = ipSortKey(b.address);
  if (ka !== kb) return ka < kb ? -1 : 1;
  if (a.port !== b.port) return a.port - b.port;
  return a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0;
};

const byAddressPort = (a: RealServer, b: RealServer): number => {
  const ka = ipSortKey(a.address);
  const kb = ipSortKey(b.address);
  return ka !== kb ? (ka < kb ? -1 : 1) : a.port - b.port;
};

export class IpvsModel {
  private readonly servers = new Map<string, Entry>();
  /** `ipvsadm` command lines of every change since the last `takeOps()`. */
  private ops: string[] = [];

  static from(table: IpvsTable): IpvsModel {
    const m = new IpvsModel();
    for (const vs of table.virtualServers) {
      const { realServers, ...spec } = vs;
      m.servers.set(virtualServerKey(vs), {
        spec, reals: new Map(realServers.map((rs) => [realServerKey(rs), rs])),
      });
    }
    return m;
  }

  clone(): IpvsModel {
    const m = new IpvsModel();
    for (const [k, e] of this.servers) m.servers.set(k, { spec: e.spec, reals: new Map(e.reals) });
    return m;
  }

  /** Record a non-IPVS command in the same log, to keep upstream's order of work. */
  record(op: string): void {
    this.ops.push(op);
  }

  takeOps(): string[] {
    const ops = this.ops;
    this.ops = [];
    return ops;
  }

  getVirtualServer(key: string): VirtualServerSpec | undefined {
    return this.servers.get(key)?.spec;
  }

  keys(): string[] {
    return [...this.servers.keys()];
  }

  /** Add when missing, update in place when it differs (upstream syncService). */
  ensureVirtualServer(spec: VirtualServerSpec): void {
    const key = virtualServerKey(spec);
    const cur = this.servers.get(key);
    if (cur === undefined) {
      this.servers.set(key, { spec, reals: new Map() });
      this.ops.push(formatVirtualServer({ ...spec, realServers: [] }));
    } else if (!sameSpec(cur.spec, spec)) {
      cur.spec = spec;
      this.ops.push(formatVirtualServer({ ...spec, realServers: [] }).replace(/^-A /, '-E '));
    }
  }

  deleteVirtualServer(key: string): void {
    const cur = this.servers.get(key);
    if (cur === undefined) return;
    this.servers.delete(key);
    this.ops.push(formatVirtualServer({ ...cur.spec, realServers: [] }).replace(/^-A (\S+ \S+).*$/, '-D $1'));
  }

  getRealServers(key: string): RealServer[] {
    return [...(this.servers.get(key)?.reals.values() ?? [])];
  }

  /** Add, or set the weight of, a real server (`-a` / `-e`). */
  setRealServer(key: string, rs: RealServer): void {
    const e = this.servers.get(key);
    if (e === undefined) return;
    const cur = e.reals.get(realServerKey(rs));
    if (cur !== undefined && cur.weight === rs.weight) return;
    e.reals.set(realServerKey(rs), rs);
    const line = formatRealServer({ ...e.spec, realServers: [] }, rs);
    this.ops.push(cur === undefined ? line : line.replace(/^-a /, '-e '));
  }

  deleteRealServer(key: string, rsKey: string): void {
    const e = this.servers.get(key);
    const rs = e?.reals.get(rsKey);
    if (e === undefined || rs === undefined) return;
    e.reals.delete(rsKey);
    const line = formatRealServer({ ...e.spec, realServers: [] }, rs);
    this.ops.push(line.replace(/^-a (.* -r \S+).*$/, '-d $1'));
  }

  /** The table in canonical order: virtual servers by address, port, protocol; reals likewise. */
  toTable(): IpvsTable {
    const entries = [...this.servers.values()].sort((a, b) => byAddressPortProto(a.spec, b.spec));
    return {
      virtualServers: entries.map((e) => ({
        ...e.spec, realServers: [...e.reals.values()].sort(byAddressPort),
      })),
    };
  }
}
