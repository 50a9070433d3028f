// Dropping what two dumps share before parsing them (the semantic view of big tables): each
// format splits into units whose facts depend on nothing else (iptables-reduce.ts,
// nftables-reduce.ts, ipvs-reduce.ts: each mode's registry entry's `diff.reducePair`); units
// equal on both sides have equal facts, so the semantic diff of the reduced texts is that of
// the whole ones. Undefined: not applicable.

import { proxyMode } from '../proxy/registry.js';
import type { DiffFormat } from './types.js';

export function reducePair(format: DiffFormat, a: string, b: string):
  [string, string] | undefined {
  return proxyMode(format).diff.reducePair?.(a, b);
}
