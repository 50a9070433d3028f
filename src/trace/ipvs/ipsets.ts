// ipset membership for `-m set --match-set NAME FLAGS`: the packet fields the flags pick
// (dst/src per dimension) against the set's entries in `ipset save` notation.

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

export function buildSetLookup(sets: readonly IpSet[]): SetLookup {
  const byName = new Map(sets.map((s) => [s.name, s]));
  return (name, flags, pkt) => {
    const s = byName.get(name);
    if (!s) return false;
    const dims = DIMS[s.type] ?? [];
    const key = dims.map((d, i) => d(pkt, flags[i] ?? 'dst'));
    return s.entries.some((e) => entryMatches(s.type, e.value, key));
  };
}

function entryMatches(type: string, entry: string, key: readonly string[]): boolean {
  const parts = entry.split(',');
  if (parts.length !== key.length) return false;
  return parts.every((p, i) => {
    if (type === 'bitmap:port' || (i === 1 && type !== 'hash:ip')) return p === key[i];
    return addressMatches(p, key[i]!);
  });
}
