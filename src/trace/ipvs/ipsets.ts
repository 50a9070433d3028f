// ipset membership for `-m set --match-set NAME FLAGS`: the packet fields the flags pick
// (dst/src per dimension) against the set's entries in `ipset save` notation. Each set is
// indexed once, on first use: entries of plain addresses and ports by their exact key (a hash
// lookup, the hot path of big tables), entries with CIDRs matched one by one.

import { canonicalIP } from '../../api/net.js';
import { addressMatches, type Packet } from '../packet.js';
import type { IpSet } from '../../ruleset/ipvs/types.js';

type Dim = (pkt: Packet, dir: string) => string;

const ip: Dim = (p, dir) => (dir === 'src' ? p.src : p.dst);
const port: Dim = (p, dir) => `${p.proto}:${dir === 'src' ? p.sport : p.dport}`;

const DIMS: Record<string, readonly Dim[]> = {
  'hash:ip': [ip],
  'hash:ip,port': [ip, port],
  'hash:ip,port,ip': [ip, port, ip],
  'hash:ip,port,net': [ip, port, ip],
  'bitmap:port': [(p, dir) => String(dir === 'src' ? p.sport : p.dport)],
};

export type SetLookup = (name: string, flags: readonly string[], pkt: Packet) => boolean;

interface SetIndex {
  readonly dims: readonly Dim[];
  /** Entries without CIDRs, by their parts joined with `,` (addresses canonical). */
  readonly exact: ReadonlySet<string>;
  /** Entries with a CIDR part, split into parts. */
  readonly rest: readonly (readonly string[])[];
}

export function buildSetLookup(sets: readonly IpSet[]): SetLookup {
  const byName = new Map(sets.map((s) => [s.name, s]));
  const indexes = new Map<string, SetIndex>();
  return (name, flags, pkt) => {
    let idx = indexes.get(name);
    if (!idx) {
      const s = byName.get(name);
      if (!s) return false;
      idx = indexSet(s);
      indexes.set(name, idx);
    }
    const dims = idx.dims;
    if (dims.length === 0) return idx.exact.has('') || restMatches(idx, []);
    let joined = dims[0]!(pkt, flags[0] ?? 'dst');
    for (let i = 1; i < dims.length; i++) joined += `,${dims[i]!(pkt, flags[i] ?? 'dst')}`;
    if (idx.exact.has(joined)) return true;
    return idx.rest.length > 0 && restMatches(idx, dims.map((d, i) => d(pkt, flags[i] ?? 'dst')));
  };
}

function restMatches(idx: SetIndex, key: readonly string[]): boolean {
  return idx.rest.some((parts) => partsMatch(idx.dims.length, parts, key));
}

/** Part i of an entry is an address (else a port, compared as written). */
function isAddressPart(type: string, i: number): boolean {
  return !(type === 'bitmap:port' || (i === 1 && type !== 'hash:ip'));
}

function indexSet(s: IpSet): SetIndex {
  const dims = DIMS[s.type] ?? [];
  const exact = new Set<string>();
  const rest: (readonly string[])[] = [];
  for (const e of s.entries) {
    const parts = e.value.split(',');
    // An entry of another shape never matches (as the linear scan it replaces).
    if (parts.length !== dims.length) continue;
    const isAddr = parts.map((_, i) => isAddressPart(s.type, i));
    if (parts.some((p, i) => isAddr[i] && p.includes('/'))) {
      rest.push(parts.map((p, i) => (isAddr[i] ? p : `=${p}`)));
      continue;
    }
    const canon = parts.map((p, i) => (isAddr[i] ? canonicalIP(p) : p));
    // An unparsable address matches nothing.
    if (canon.every((p) => typeof p === 'string' && p !== '')) exact.add(canon.join(','));
  }
  return { dims, exact, rest };
}

/** Parts prefixed `=` compare as written; others are address specs. */
function partsMatch(n: number, parts: readonly string[], key: readonly string[]): boolean {
  if (parts.length !== n) return false;
  return parts.every((p, i) => (p.startsWith('=') ? p.slice(1) === key[i] : addressMatches(p, key[i]!)));
}
