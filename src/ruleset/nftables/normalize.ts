// Bring a ruleset to the form the kernel lists it in, so a table compiled by kdp (transaction
// form) and the same table read back with `nft list` / `nft -j list` compare equal. What the
// kernel rewrites: `mark` → `meta mark` with 8-digit hex and `|`/`&`/`^`, one-element
// anonymous sets lose their braces and bigger ones are sorted and `, `-separated, interface
// names are quoted, base chains gain `policy accept`, dynamic sets gain `size 65535`, counters
// gain values, affinity-set elements appear with traffic. Handles are dropped.

import { parseCIDR, parseIP } from '../../api/net.js';
import { cloneRuleset, type NftChain, type NftRule, type NftRuleset,
  type NftSet } from './model.js';

function hex8(word: string): string {
  const n = Number(word);
  return Number.isInteger(n) ? '0x' + n.toString(16).padStart(8, '0') : word;
}

/** Numeric sort key of an address or CIDR (for anonymous set order). */
function addrKey(w: string): [bigint, number] {
  const c = parseCIDR(w);
  if (c) return [c.base, c.prefix];
  const ip = parseIP(w);
  return ip ? [ip.value, 129] : [0n, 0];
}

function normalizeAnonSets(t: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < t.length; i++) {
    if (t[i] !== '{' || t[i - 1] === 'vmap' || t[i - 1] === 'map' || t[i - 2] === 'update') {
      out.push(t[i]!);
      continue;
    }
    const end = t.indexOf('}', i);
    if (end < 0) { out.push(t[i]!); continue; }
    const items = t.slice(i + 1, end).join(' ').split(',').map((s) => s.trim()).filter(Boolean);
    items.sort((a, b) => {
      const [x, p] = addrKey(a);
      const [y, q] = addrKey(b);
      return x < y ? -1 : x > y ? 1 : p - q;
    });
    if (items.length === 1) out.push(items[0]!);
    else out.push('{', ...items.map((s, k) => (k < items.length - 1 ? `${s},` : s)), '}');
    i = end;
  }
  return out;
}

/** vmap / map literals: `{ 0 : goto a , 1 : goto b }` → `{ 0 : goto a, 1 : goto b }`. */
function normalizeCommas(t: string[]): string[] {
  const out: string[] = [];
  for (const w of t) {
    if (w === ',' && out.length > 0) out[out.length - 1] += ',';
    else out.push(w);
  }
  return out;
}

function normalizeTokens(tokens: readonly string[]): string[] {
  let t = [...tokens];
  if (t[0] === 'mark' && t[1] === 'set' && t[2] === 'mark' && (t[3] === 'or' || t[3] === 'xor')) {
    const op = t[3] === 'or' ? '|' : '^';
    t = ['meta', 'mark', 'set', 'meta', 'mark', op, hex8(t[4]!), ...t.slice(5)];
  } else if (t[0] === 'mark' && t[1] === 'and' && t[3] === '==') {
    t = ['meta', 'mark', '&', hex8(t[2]!), t[3], hex8(t[4]!), ...t.slice(5)];
  }
  for (let i = 0; i + 1 < t.length; i++) {
    if ((t[i] === 'iifname' || t[i] === 'oifname')) {
      const j = t[i + 1] === '!=' ? i + 2 : i + 1;
      if (t[j] !== undefined && !t[j]!.startsWith('"')) t[j] = `"${t[j]}"`;
    }
  }
  for (let i = 0; i < t.length; i++) {
    if (t[i] === 'counter' && t[i + 1] === 'packets' && t[i + 3] === 'bytes') t.splice(i + 1, 4);
  }
  return normalizeCommas(normalizeAnonSets(t));
}

function normalizeRule(r: NftRule): NftRule {
  const tokens = normalizeTokens(r.tokens);
  return r.comment === undefined ? { tokens } : { tokens, comment: r.comment };
}

function normalizeChain(c: NftChain): NftChain {
  const { handle: _h, ...rest } = c;
  const out: NftChain = { ...rest, rules: c.rules.map(normalizeRule) };
  return c.type !== undefined && c.policy === undefined ? { ...out, policy: 'accept' } : out;
}

function normalizeSet(s: NftSet): NftSet {
  const { handle: _h, size, ...rest } = s;
  const dynamic = s.flags.includes('dynamic') || s.flags.includes('timeout');
  const flags = s.flags.filter((f) => f !== 'dynamic');
  const elements = new Map([...s.elements].filter(() => !dynamic).map(([k, e]) => {
    const { timeout: _t, expires: _e, ...el } = e;
    return [k, el] as const;
  }));
  const out: NftSet = { ...rest, flags, elements };
  return size !== undefined && !(dynamic && size === 65535) ? { ...out, size } : out;
}

/** A normalised copy (the input is not changed). */
export function normalizeRuleset(rs: NftRuleset): NftRuleset {
  const copy = cloneRuleset(rs);
  for (const [k, t] of copy.tables) {
    const chains = new Map([...t.chains].map(([n, c]) => [n, normalizeChain(c)] as const));
    const sets = new Map([...t.sets].map(([n, s]) => [n, normalizeSet(s)] as const));
    const { handle: _h, ...rest } = t;
    copy.tables.set(k, { ...rest, chains, sets });
  }
  return copy;
}

export interface DiffOptions {
  /** Skip table and chain comments (`nft -j` of nftables 1.0.x does not report them). */
  readonly ignoreObjectComments?: boolean;
}

/** Differences between two rulesets, as readable lines (empty = equal). Order-insensitive for
 * tables, chains, sets and elements; rule order inside a chain matters. */
export function diffRulesets(a: NftRuleset, b: NftRuleset, opts: DiffOptions = {}): string[] {
  const oc = !opts.ignoreObjectComments;
  const out: string[] = [];
  const keys = new Set([...a.tables.keys(), ...b.tables.keys()]);
  for (const k of [...keys].sort()) {
    const ta = a.tables.get(k);
    const tb = b.tables.get(k);
    if (!ta || !tb) { out.push(`table ${k}: only in ${ta ? 'first' : 'second'}`); continue; }
    if (oc && ta.comment !== tb.comment) {
      out.push(`table ${k}: comment ${ta.comment} != ${tb.comment}`);
    }
    const chains = new Set([...ta.chains.keys(), ...tb.chains.keys()]);
    for (const n of [...chains].sort()) {
      const ca = ta.chains.get(n);
      const cb = tb.chains.get(n);
      if (!ca || !cb) { out.push(`chain ${n}: only in ${ca ? 'first' : 'second'}`); continue; }
      const head = (c: NftChain) =>
        JSON.stringify([c.type, c.hook, c.priority, c.policy, oc ? c.comment : undefined]);
      if (head(ca) !== head(cb)) out.push(`chain ${n}: ${head(ca)} != ${head(cb)}`);
      const ra = ca.rules.map(ruleText);
      const rb = cb.rules.map(ruleText);
      for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
        if (ra[i] !== rb[i]) out.push(`chain ${n} rule ${i + 1}: ${ra[i]} != ${rb[i]}`);
      }
    }
    const sets = new Set([...ta.sets.keys(), ...tb.sets.keys()]);
    for (const n of [...sets].sort()) {
      const sa = ta.sets.get(n);
      const sb = tb.sets.get(n);
      if (!sa || !sb) {
        out.push(`${(sa ?? sb)!.kind} ${n}: only in ${sa ? 'first' : 'second'}`);
        continue;
      }
      const head = (s: NftSet) => JSON.stringify([s.kind, s.type, [...s.flags].sort(), s.timeout,
        s.comment, s.size]);
      if (head(sa) !== head(sb)) out.push(`${sa.kind} ${n}: ${head(sa)} != ${head(sb)}`);
      const el = (e: NftSet['elements'] extends Map<string, infer E> ? E : never) =>
        JSON.stringify([e.key, e.value, e.comment]);
      const ea = new Set([...sa.elements.values()].map(el));
      const eb = new Set([...sb.elements.values()].map(el));
      for (const e of ea) if (!eb.has(e)) out.push(`${sa.kind} ${n}: element ${e} only in first`);
      for (const e of eb) if (!ea.has(e)) out.push(`${sa.kind} ${n}: element ${e} only in second`);
    }
  }
  return out;
}

function ruleText(r: NftRule): string {
  return r.tokens.join(' ') + (r.comment === undefined ? '' : ` comment "${r.comment}"`);
}
