// An in-memory IPVS table with the operations upstream's utilipvs.Interface offers. Each change
// is recorded (formatted lazily as the `ipvsadm` command that makes it: `-A/-E/-D` virtual
// servers, `-a/-e/-d` real servers), so a sync's incremental work is visible and replayable.
// Entries keep their sort keys; their `ipvsadm -Sn` lines are made only when the table is
// formatted (a large table has 100k+ real servers: no string kept per real server).

import { ipSortKey } from '../../ruleset/ipvs/address.js';
import {
  formatRealServer, formatVirtualServer, realServerLine, serviceArgs, virtualServerKey,
} from '../../ruleset/ipvs/ipvsadm.js';
import { joinHostPort } from '../../ruleset/ipvs/address.js';
import type { IpvsTable, RealServer, VirtualServer } from '../../ruleset/ipvs/types.js';
import { TextSink } from '../text-sink.js';

/** A virtual server without its real servers (upstream utilipvs.VirtualServer). */
export type VirtualServerSpec = Omit<VirtualServer, 'realServers'>;

/**
 * A real server with its cached sort key. The key of an IPv4 real server
 * is the number address × 65536 + port (no string per real server: a large table has 100k+);
 * IPv6 keys are strings. A virtual server's real servers are all of its family.
 */
export interface RealEntry {
  readonly rs: RealServer;
  readonly order: string | number;
  /** `ip:port` (the key it is stored under; its line is made when the table is formatted). */
  readonly dest: string;
}

/** Sort key of a real server (see RealEntry). */
function realOrder(address: string, port: number): string | number {
  if (address.includes(':')) return `${ipSortKey(address)} ${port5(port)}`;
  let value = 0;
  let octet = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 46) {
      value = value * 256 + octet;
      octet = 0;
    } else {
      octet = octet * 10 + (c - 48);
    }
  }
  return (value * 256 + octet) * 65536 + port;
}

interface Entry {
  spec: VirtualServerSpec;
  readonly order: string;
  readonly service: string;
  head: string;
  /** Real servers by `ip:port` (one map only: a large table has 100k+ of them). */
  readonly lines: Map<string, RealEntry>;
}

export const realServerKey = (rs: Pick<RealServer, 'address' | 'port'>): string =>
  joinHostPort(rs.address, rs.port);

function sameSpec(a: VirtualServerSpec, b: VirtualServerSpec): boolean {
  return a.scheduler === b.scheduler && a.persistence === b.persistence &&
    a.schedFlags.join(',') === b.schedFlags.join(',');
}

const port5 = (p: number) => String(p).padStart(5, '0');
const byOrder = <K extends string | number>(a: { order: K }, b: { order: K }) =>
  (a.order < b.order ? -1 : a.order > b.order ? 1 : 0);

/**
 * One recorded change, formatted only when asked for (a first sync of a large cluster makes
 * 100k+ of them): `-A/-E/-D` virtual server, `-a/-e/-d` real server, or a raw command line.
 */
export type IpvsOp =
  | { readonly op: '-A' | '-E' | '-D'; readonly vs: VirtualServerSpec }
  | { readonly op: '-a' | '-e' | '-d'; readonly vs: VirtualServerSpec; readonly rs: RealServer }
  | { readonly op: 'raw'; readonly line: string };

export function formatOp(o: IpvsOp): string {
  if (o.op === 'raw') return o.line;
  const vs = { ...o.vs, realServers: [] };
  switch (o.op) {
    case '-A': return formatVirtualServer(vs);
    case '-E': return formatVirtualServer(vs).replace(/^-A /, '-E ');
    case '-D': return `-D ${serviceArgs(vs)}`;
    case '-a': return formatRealServer(vs, o.rs);
    case '-e': return formatRealServer(vs, o.rs).replace(/^-a /, '-e ');
    case '-d': return `-d ${serviceArgs(vs)} -r ${realServerKey(o.rs)}`;
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
      m.ensureVirtualServer(spec);
      for (const rs of realServers) m.setRealServer(virtualServerKey(spec), rs);
    }
    m.ops = [];
    return m;
  }

  clone(): IpvsModel {
    const m = new IpvsModel();
    for (const [k, e] of this.servers) {
      m.servers.set(k, { ...e, lines: new Map(e.lines) });
    }
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
      this.servers.set(key, {
        spec, order: `${ipSortKey(spec.address)} ${port5(spec.port)} ${spec.protocol}`,
        service: serviceArgs(spec), head: formatVirtualServer({ ...spec, realServers: [] }),
        lines: new Map(),
      });
      this.ops.push({ op: '-A', vs: spec });
    } else if (!sameSpec(cur.spec, spec)) {
      cur.spec = spec;
      cur.head = formatVirtualServer({ ...spec, realServers: [] });
      this.ops.push({ op: '-E', vs: spec });
    }
  }

  deleteVirtualServer(key: string): void {
    const cur = this.servers.get(key);
    if (cur === undefined) return;
    this.servers.delete(key);
    this.ops.push({ op: '-D', vs: cur.spec });
  }

  /** The live map of a virtual server's real servers by `ip:port` (do not modify). */
  realServerMap(key: string): ReadonlyMap<string, RealEntry> | undefined {
    return this.servers.get(key)?.lines;
  }

  getRealServers(key: string): RealServer[] {
    const out: RealServer[] = [];
    for (const r of this.servers.get(key)?.lines.values() ?? []) out.push(r.rs);
    return out;
  }

  /** Add, or set the weight of, a real server (`-a` / `-e`); `rsKey` is its `ip:port`. */
  setRealServer(key: string, rs: RealServer, rsKey = realServerKey(rs)): void {
    const e = this.servers.get(key);
    if (e === undefined) return;
    const cur = e.lines.get(rsKey);
    if (cur !== undefined && cur.rs.weight === rs.weight) return;
    const order = cur?.order ?? realOrder(rs.address, rs.port);
    e.lines.set(rsKey, { rs, order, dest: rsKey });
    this.ops.push({ op: cur === undefined ? '-a' : '-e', vs: e.spec, rs });
  }

  deleteRealServer(key: string, rsKey: string): void {
    const e = this.servers.get(key);
    const rs = e?.lines.get(rsKey)?.rs;
    if (e === undefined || rs === undefined) return;
    e.lines.delete(rsKey);
    this.ops.push({ op: '-d', vs: e.spec, rs });
  }

  private sorted(): Entry[] {
    return [...this.servers.values()].sort(byOrder);
  }

  /** The table in canonical order: virtual servers by address, port, protocol; reals likewise. */
  toTable(): IpvsTable {
    return {
      virtualServers: this.sorted().map((e) => ({
        ...e.spec, realServers: [...e.lines.values()].sort(byOrder).map((r) => r.rs),
      })),
    };
  }

  /**
   * `ipvsadm -Sn` text of `toTable()`, from the cached lines (written via `sink`), as
   * `TextSink.finish` gives it (pieces for a large first text).
   */
  formatSave(sink = new TextSink()): string | string[] {
    let reals = 0;
    for (const e of this.servers.values()) reals += e.lines.size;
    sink.reset(128 * (this.servers.size + reals));
    for (const e of this.sorted()) {
      sink.line(e.head);
      const reals = e.lines.size < 2 ? e.lines.values() : [...e.lines.values()].sort(byOrder);
      for (const r of reals) sink.line(realServerLine(e.service, r.rs, r.dest));
    }
    return sink.finish();
  }
}
