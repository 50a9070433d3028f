// One model of an nftables ruleset, shared by the kube-proxy compiler, the tracer and the diff.
// Rules are kept as token lists (the words of the rule as `nft` reads them) plus an optional
// comment, because kube-proxy writes, and the tracer matches, rules as text. Sets and maps share
// one namespace per table, as in the kernel.

export type NftFamily = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';

export const NFT_FAMILIES: readonly NftFamily[] = ['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'];

export interface NftRule {
  /** Rule words, without the trailing `comment "..."`. */
  readonly tokens: readonly string[];
  readonly comment?: string;
  /** Kernel handle when read from a listing (`nft -a` / JSON); ignored by comparisons. */
  readonly handle?: number;
}

export interface NftChain {
  readonly name: string;
  /** Base chains only: `filter` | `nat` | `route`. */
  readonly type?: string;
  readonly hook?: string;
  /** Numeric priority (named priorities are resolved when parsed). */
  readonly priority?: number;
  readonly policy?: string;
  readonly device?: string;
  readonly comment?: string;
  readonly rules: NftRule[];
  /** Kernel handle when read from a listing; ignored by comparisons. */
  readonly handle?: number;
}

export interface NftElement {
  /** Key parts of a concatenation (`10.96.0.1 . tcp . 80` → 3 parts). */
  readonly key: readonly string[];
  /** Map value parts (`goto service-…`); undefined for set elements. */
  readonly value?: readonly string[];
  readonly comment?: string;
  /** Per-element timeout / remaining time as a listing prints them (`3h`, `2h59m58s`). */
  readonly timeout?: string;
  readonly expires?: string;
}

export interface NftSet {
  readonly kind: 'set' | 'map';
  readonly name: string;
  /** Key type, e.g. `ipv4_addr . inet_proto . inet_service`; for maps `KEY : VALUE`. */
  readonly type: string;
  readonly typeof?: string;
  readonly flags: readonly string[];
  /** Element timeout in seconds. */
  readonly timeout?: number;
  readonly gcInterval?: number;
  readonly size?: number;
  readonly policy?: string;
  readonly autoMerge?: boolean;
  readonly comment?: string;
  /** Keyed by the joined key (`a . b`), insertion-ordered. */
  readonly elements: Map<string, NftElement>;
  readonly handle?: number;
}

export interface NftTable {
  readonly family: NftFamily;
  readonly name: string;
  comment?: string;
  flags?: readonly string[];
  handle?: number;
  readonly chains: Map<string, NftChain>;
  readonly sets: Map<string, NftSet>;
}

export interface NftRuleset {
  /** Keyed by `family name`. */
  readonly tables: Map<string, NftTable>;
}

export function tableKey(family: string, name: string): string {
  return `${family} ${name}`;
}

export function emptyRuleset(): NftRuleset {
  return { tables: new Map() };
}

export function newTable(family: NftFamily, name: string): NftTable {
  return { family, name, chains: new Map(), sets: new Map() };
}

export function elementKey(key: readonly string[]): string {
  return key.join(' . ');
}

/** Deep copy, so a transaction can be applied to a copy and dropped on failure. */
export function cloneRuleset(rs: NftRuleset): NftRuleset {
  const tables = new Map<string, NftTable>();
  for (const [k, t] of rs.tables) {
    const chains = new Map<string, NftChain>();
    for (const [n, c] of t.chains) chains.set(n, { ...c, rules: [...c.rules] });
    const sets = new Map<string, NftSet>();
    for (const [n, s] of t.sets) sets.set(n, { ...s, elements: new Map(s.elements) });
    tables.set(k, { ...t, chains, sets });
  }
  return { tables };
}

export function isFamily(s: string): s is NftFamily {
  return (NFT_FAMILIES as readonly string[]).includes(s);
}
