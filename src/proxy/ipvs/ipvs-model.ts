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

/** Sort by a string key computed once per element. */
function sortByKey<T>(items: readonly T[], key: (t: T) => string): T[] {
  return items.map((t) => ({ k: key(t), t }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0)).map((x) => x.t);
}

const port5 = (p: number) => String(p).padStart(5, '0');
const vsOrder = (v: VirtualServerSpec) => `${ipSortKey(v.address)} ${port5(v.port)} ${v.protocol}`;
const rsOrder = (r: RealServer) => `${ipSortKey(r.address)} ${port5(r.port)}`;

/**
 * One recorded change, formatted only when asked for (a first sync of a large cluster makes
 * 100k+ of them): `-A/-E/-D` virtual server, `-a/-e/-d` real server, or a raw command line.
 */
export type IpvsOp =
  | { readonly op: '-A' | '-E' | '-D'; readonly vs: VirtualServerSpec }
  | { readonly op: '-a' | '-e' | '-d'; readonly vs: VirtualServerSpec; readonly rs: RealServer }
  | { readonly op: 'raw'; readonly line: string };

export function formatOp(o: IpvsOp): string {
  switch (o.op) {
    case 'raw': return o.line;
    case '-A': return formatVirtualServer({ ...o.vs, realServers: [] });
    case '-E': return formatVirtualServer({ ...o.vs, realServers: [] }).replace(/^-A /, '-E ');
    case '-D':
      return formatVirtualServer({ ...o.vs, realServers: [] }).replace(/^-A (\S+ \S+).*$/, '-D $1');
    case '-a': return formatRealServer({ ...o.vs, realServers: [] }, o.rs);
    case '-e': return formatRealServer({ ...o.vs, realServers: [] }, o.rs).replace(/^-a /, '-e ');
    case '-d':
      return formatRealServer({ ...o.vs, realServers: [] }, o.rs)
        .replace(/^-a (.* -r \S+).*$/, '-d $1');
  }
}

export class IpvsModel {
  private readonly servers = new Map<string, Entry>();
  /** Every change since the last `takeOps()`. */
  private ops: IpvsOp[] = [];

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
  record(line: string): void {
    this.ops.push({ op: 'raw', line });
  }

  takeOps(): IpvsOp[] {
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
      this.ops.push({ op: '-A', vs: spec });
    } else if (!sameSpec(cur.spec, spec)) {
      cur.spec = spec;
      this.ops.push({ op: '-E', vs: spec });
    }
  }

  deleteVirtualServer(key: string): void {
    const cur = this.servers.get(key);
    if (cur === undefined) return;
    this.servers.delete(key);
    this.ops.push({ op: '-D', vs: cur.spec });
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
    this.ops.push({ op: cur === undefined ? '-a' : '-e', vs: e.spec, rs });
  }

  deleteRealServer(key: string, rsKey: string): void {
    const e = this.servers.get(key);
    const rs = e?.reals.get(rsKey);
    if (e === undefined || rs === undefined) return;
    e.reals.delete(rsKey);
    this.ops.push({ op: '-d', vs: e.spec, rs });
  }

  /** The table in canonical order: virtual servers by address, port, protocol; reals likewise. */
  toTable(): IpvsTable {
    const entries = sortByKey([...this.servers.values()], (e) => vsOrder(e.spec));
    return {
      virtualServers: entries.map((e) => ({
        ...e.spec,
        realServers: e.reals.size < 2 ? [...e.reals.values()] : sortByKey([...e.reals.values()], rsOrder),
      })),
    };
  }
}
