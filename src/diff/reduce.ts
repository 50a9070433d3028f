// Dropping what two dumps share before parsing them (the semantic view of big tables): each
// format splits into units whose facts depend on nothing else (iptables-reduce.ts,
// nftables-reduce.ts, ipvs-reduce.ts); units equal on both sides have equal facts, so the
// semantic diff of the reduced texts is that of the whole ones. Undefined: not applicable.

import { reduceIptablesPair } from './iptables-reduce.js';
import { reduceIpvsPair } from './ipvs-reduce.js';
import { reduceNftPair } from './nftables-reduce.js';
import type { DiffFormat } from './types.js';

/** The form parseNftAny would read: JSON, `nft list` text, or a transaction. */
const isNftTransaction = (text: string) =>
  !text.trimStart().startsWith('{') && !/^table\s/m.test(text);

export function reducePair(format: DiffFormat, a: string, b: string):
  [string, string] | undefined {
  switch (format) {
    case 'iptables': return reduceIptablesPair(a, b);
    case 'nftables':
      return isNftTransaction(a) && isNftTransaction(b) ? reduceNftPair(a, b) : undefined;
    case 'ipvs': return reduceIpvsPair(a, b);
  }
}
