// What `nft -c -f` (and the kernel, on commit) refuses in a whole nftables dump, beyond the
// syntax the parsers check: jumps/gotos to chains that do not exist (rules and verdict-map
// elements), references to sets and maps that do not exist, jump loops (ELOOP, "Too many
// links"), unbalanced braces (a truncated input), and literal addresses and ports that are not
// addresses or ports (in matches, dnat/snat and set elements). The first problem is KDP_PARSE
// naming the line.
//
// A transaction is checked line by line without building the model (a 10,000-Service
// transaction is 57 MB and `kdp diff` parses only what differs); `nft list` text and JSON are
// parsed whole (their readers need it anyway) and the model is checked, with the line found by
// the rule's text when it can be.

import { parseCIDR, parseIP } from '../../api/net.js';
import { kdpError } from '../../errors.js';
import { dottedQuad, portNumber } from '../iptables/validate.js';
import { JumpGraph, type JumpEdge, type JumpNode } from '../jump-loop.js';
import { parseListElement, parseListText } from './list-text.js';
import { parseListJson } from './list-json.js';
import type { NftRuleset } from './model.js';
import { splitWords } from './tokens.js';
import { splitTopLevel } from './transaction.js';
import { wordOffsets, words } from '../words.js';

/**
 * Where a problem is: a line number, or (for a parsed listing) a function finding it, which
 * answers a description when the line cannot be found.
 */
type Where = number | (() => number | string);

function fail(where: Where, reason: string, text: string): never {
  const w = typeof where === 'number' ? where : where();
  const at = typeof w === 'number' ? `line ${w}` : w;
  throw kdpError('KDP_PARSE', `nft ${at}: ${reason}: ${text.trim().slice(0, 200)}`, {
    causes: [{ field: at, reason: 'FieldValueInvalid', message: reason }],
  });
}

export function validateNftText(text: string): void {
  const t = text.trimStart();
  if (t.startsWith('{')) return validateRuleset(parseListJson(text).ruleset, text);
  if (/^table\s/m.test(text)) return validateRuleset(parseListText(text), text);
  validateTransaction(text);
}

interface SetInfo {
  readonly keyTypes: readonly string[];
}

/** One table's names and references; references are resolved at the end (`finish`). */
class TableCheck {
  /** Chains with a hook: where the kernel's loop check starts. */
  readonly baseChains = new Set<string>();
  readonly sets = new Map<string, SetInfo>();
  /**
   * Every chain named so far, existing (`known`) or not, with its jumps: one lookup per name
   * serves the chain's existence, the reference check and the loop search.
   */
  private readonly graph = new JumpGraph();
  /** Chains jumped to, in order of first jump: checked at the end. */
  private readonly chainRefs: JumpNode[] = [];
  private readonly setRefs = new Map<string, { where: Where; text: string }>();
  private lastFrom = '';
  private lastOut: JumpEdge[] | undefined;

  constructor(readonly family: string) {}

  addChain(name: string): void {
    this.graph.node(name).known = true;
  }

  deleteChain(name: string): void {
    const n = this.graph.nodes.get(name);
    if (n) n.known = false;
  }

  hasChain(name: string): boolean {
    return this.graph.nodes.get(name)?.known === true;
  }

  rule(chain: string, tokens: readonly string[], where: Where, text: string): void {
    for (let i = 0; i < tokens.length; i++) {
      const w = tokens[i]!;
      if (w === 'jump' || w === 'goto') {
        const to = bare(tokens[i + 1] ?? '');
        if (to === '') fail(where, `${w} needs a chain`, text);
        this.jump(chain, to, where, text);
      } else if (w.charCodeAt(0) === 0x40 /* @ */) {
        const name = bare(w.slice(1));
        if (!this.setRefs.has(name)) this.setRefs.set(name, { where, text });
        if (tokens[i - 1] === 'vmap') this.edge(chain, `@${name}`, where, text);
      } else if (w === 'dnat' || w === 'snat') {
        checkNat(tokens, i + 1, where, text);
      } else if ((w === 'saddr' || w === 'daddr') && (tokens[i - 1] === 'ip' ||
        tokens[i - 1] === 'ip6')) {
        eachValue(tokens, i + 1, (v) => {
          if (looksLiteral(v) && !isAddress(v, tokens[i - 1] === 'ip6')) {
            const family = tokens[i - 1] === 'ip6' ? 'IPv6' : 'IPv4';
            fail(where, `${v} is not an ${family} address`, text);
          }
        });
      } else if ((w === 'dport' || w === 'sport') && PORT_PROTOS.has(tokens[i - 1] ?? '')) {
        eachValue(tokens, i + 1, (v) => {
          if (/^\d/.test(v) && !isPortRange(v)) fail(where, `${v} is not a port (0-65535)`, text);
        });
      }
    }
  }

  /**
   * rule() over words k..n-1 of `line` (offsets in `words`), making strings only of the words it
   * checks; plain dotted quads and decimal ports are checked in place.
   */
  ruleAt(chain: string, line: string, k: number, n: number, where: number): void {
    for (let i = k; i < n; i++) {
      const s = words.ts[i]!;
      const e = words.te[i]!;
      const len = e - s;
      const c = line.charCodeAt(s);
      if (len === 4 && (line.startsWith('jump', s) || line.startsWith('goto', s))) {
        const to = i + 1 < n ? bare(line.slice(words.ts[i + 1], words.te[i + 1])) : '';
        if (to === '') fail(where, `${line.slice(s, e)} needs a chain`, line);
        this.jump(chain, to, where, line);
      } else if (c === 0x40 /* @ */) {
        const name = bare(line.slice(s + 1, e));
        if (!this.setRefs.has(name)) this.setRefs.set(name, { where, text: line });
        if (i > k && wordIs(line, words.ts[i - 1]!, words.te[i - 1]!, 'vmap')) {
          this.edge(chain, `@${name}`, where, line);
        }
      } else if (len === 4 && (line.startsWith('dnat', s) || line.startsWith('snat', s))) {
        if (i + 2 < n && wordIs(line, words.ts[i + 1]!, words.te[i + 1]!, 'to') &&
          natIsPlain(line, words.ts[i + 2]!, words.te[i + 2]!)) continue;
        checkNat(wordsAt(line, i + 1, n, 3), 0, where, line);
      } else if (len === 5 && i > k &&
        (line.startsWith('saddr', s) || line.startsWith('daddr', s))) {
        const ps = words.ts[i - 1]!;
        const pe = words.te[i - 1]!;
        const v6 = wordIs(line, ps, pe, 'ip6');
        if (!v6 && !wordIs(line, ps, pe, 'ip')) continue;
        const vs = words.ts[i + 1]!;
        const ve = words.te[i + 1]!;
        if (i + 1 < n && !v6 && dottedQuad(line, vs, ve, -1) === ve) continue;
        eachValue(valueWordsAt(line, i + 1, n), 0, (v) => {
          if (looksLiteral(v) && !isAddressMemo(v, v6)) {
            fail(where, `${v} is not an ${v6 ? 'IPv6' : 'IPv4'} address`, line);
          }
        });
      } else if (len === 5 && i > k &&
        (line.startsWith('dport', s) || line.startsWith('sport', s))) {
        if (!PORT_PROTOS.has(line.slice(words.ts[i - 1], words.te[i - 1]))) continue;
        const pe = words.te[i + 1]!;
        if (i + 1 < n && portNumber(line, words.ts[i + 1]!, pe) === pe) continue;
        eachValue(valueWordsAt(line, i + 1, n), 0, (v) => {
          if (/^\d/.test(v) && !isPortRange(v)) fail(where, `${v} is not a port (0-65535)`, line);
        });
      }
    }
  }

  element(set: string, key: readonly string[], value: readonly string[] | undefined,
    where: Where, text: string): void {
    const info = this.sets.get(set);
    if (!info) {
      fail(where, `set or map ${set} does not exist`, text);
    }
    info.keyTypes.forEach((type, i) => {
      const k = key[i];
      if (k === undefined) return;
      const ok = type === 'ipv4_addr' ? isAddress(k, false) : type === 'ipv6_addr'
        ? isAddress(k, true) : type === 'inet_service' ? !/^\d/.test(k) || isPortRange(k) : true;
      if (!ok) fail(where, `element ${k} is not a ${type}`, text);
    });
    const v = value?.join(' . ').split(' ') ?? [];
    if ((v[0] === 'goto' || v[0] === 'jump') && v[1]) this.jump(`@${set}`, bare(v[1]), where, text);
  }

  private jump(from: string, to: string, where: Where, text: string): void {
    const node = this.graph.node(to);
    if (!node.firstUse) {
      node.firstUse = { lineNo: 0, text, jump: true, where };
      this.chainRefs.push(node);
    }
    this.edge(from, to, where, text, node);
  }

  private edge(from: string, to: string, where: Where, text: string, node?: JumpNode): void {
    // A chain's jumps mostly come together (a rule's vmap, consecutive rules).
    const out = from === this.lastFrom && this.lastOut ? this.lastOut : this.graph.from(from);
    this.lastFrom = from;
    this.lastOut = out;
    out.push({ to, line: typeof where === 'number' ? where : 0, text, ref: where, node });
  }

  finish(): void {
    for (const node of this.chainRefs) {
      const r = node.firstUse!;
      if (!node.known) fail(r.where as Where, `chain ${node.name} does not exist`, r.text);
    }
    for (const [name, r] of this.setRefs) {
      if (!this.sets.has(name)) fail(r.where, `set or map @${name} does not exist`, r.text);
    }
    const loop = this.graph.findLoop(this.baseChains);
    if (loop) {
      fail(loop.ref as Where, `jumps loop (${loop.path.join(' → ')}): the kernel refuses it ` +
        '(ELOOP)', loop.text);
    }
  }
}

const PORT_PROTOS = new Set(['tcp', 'udp', 'sctp', 'th', 'udplite', 'dccp']);

/** A word without the set punctuation around it (`x,` `x}` `{x`). */
function bare(w: string): string {
  let s = w;
  while (s.endsWith(',') || s.endsWith('}') || s.endsWith(';')) s = s.slice(0, -1);
  while (s.startsWith('{')) s = s.slice(1);
  return s;
}

/** The value after a match (`!= X`, `X`, `{ X, Y }`), word by word. */
function eachValue(tokens: readonly string[], from: number, f: (v: string) => void): void {
  let i = from;
  if (tokens[i] === '!=' || tokens[i] === '==') i++;
  if (tokens[i] !== '{' && !tokens[i]?.startsWith('{')) {
    if (tokens[i] !== undefined) f(bare(tokens[i]!));
    return;
  }
  for (; i < tokens.length; i++) {
    const v = bare(tokens[i]!);
    if (v !== '') f(v);
    if (tokens[i]!.endsWith('}')) return;
  }
}

/** A literal address (not `@set`, `$var`, a keyword or an expression). */
function looksLiteral(v: string): boolean {
  return /^[0-9[]/.test(v) || /^[0-9a-f]*::?[0-9a-f:./-]*$/i.test(v);
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function isIP(s: string, v6: boolean): boolean {
  const m = IPV4.exec(s);
  if (m) return !v6 && +m[1]! <= 255 && +m[2]! <= 255 && +m[3]! <= 255 && +m[4]! <= 255;
  const p = parseIP(s);
  return p !== null && (p.family === 'IPv6') === v6;
}

/** An address, prefix or range (`a-b`) of the family. */
function isAddress(s: string, v6: boolean): boolean {
  if (s.includes('/')) {
    const c = parseCIDR(s);
    return c !== null && (c.family === 'IPv6') === v6;
  }
  const dash = s.indexOf('-');
  if (dash > 0) return isIP(s.slice(0, dash), v6) && isIP(s.slice(dash + 1), v6);
  return isIP(s, v6);
}

/** isAddress, remembered: a dump repeats the same few thousand addresses and prefixes. */
const seenAddress = [new Map<string, boolean>(), new Map<string, boolean>()];

function isAddressMemo(s: string, v6: boolean): boolean {
  const m = seenAddress[v6 ? 1 : 0]!;
  let ok = m.get(s);
  if (ok === undefined) {
    if (m.size >= 100_000) m.clear();
    ok = isAddress(s, v6);
    m.set(s, ok);
  }
  return ok;
}

/** A `dnat/snat to` argument `a.b.c.d` or `a.b.c.d:port` (checkNat accepts it, family IPv4). */
function natIsPlain(line: string, s: number, e: number): boolean {
  const q = dottedQuad(line, s, e, -1);
  return q === e || (q > 0 && line.charCodeAt(q) === 0x3a /* : */ &&
    portNumber(line, q + 1, e) === e);
}

function isPortRange(s: string): boolean {
  return s.split('-').every((p) => /^\d{1,5}$/.test(p) && Number(p) <= 65535) &&
    s.split('-').length <= 2;
}

/** `dnat [ip|ip6] to ADDR[:PORT]` / `[V6]:PORT`; expressions (maps) are left alone. */
function checkNat(tokens: readonly string[], from: number, where: Where, text: string): void {
  let i = from;
  let v6: boolean | undefined;
  if (tokens[i] === 'ip' || tokens[i] === 'ip6') v6 = tokens[i++] === 'ip6';
  if (tokens[i] !== 'to') return;
  const arg = tokens[i + 1];
  if (arg === undefined) fail(where, 'dnat/snat to needs an address', text);
  if (!looksLiteral(arg)) return;
  let addr = arg;
  let port: string | undefined;
  const br = /^\[([^\]]+)\](?::(.+))?$/.exec(arg);
  if (br) [addr, port] = [br[1]!, br[2]];
  else if ((arg.match(/:/g) ?? []).length === 1) [addr, port] = arg.split(':') as [string, string];
  const family = v6 ?? addr.includes(':');
  if (!isAddress(addr, family)) fail(where, `${addr} is not an address to translate to`, text);
  if (port !== undefined && !isPortRange(port)) {
    fail(where, `${port} is not a port (0-65535)`, text);
  }
}

/** Key types of a set's `type` (`ipv4_addr . inet_proto . inet_service [: verdict]`). */
function keyTypesOf(type: string | undefined): string[] {
  if (!type) return [];
  return type.split(' : ')[0]!.split(' . ').map((s) => s.trim());
}

// ---- the transaction, line by line

/** The tables seen so far, and the one the previous line named (consecutive lines share it). */
interface TxState {
  readonly tables: Map<string, TableCheck>;
  lastKey: string;
  lastTable: TableCheck | undefined;
  /** The chain the previous rule was added to, known to exist (reset on any chain change). */
  lastRuleChain: string;
  lastRuleTable: TableCheck | undefined;
}

function validateTransaction(text: string): void {
  const st: TxState = { tables: new Map(), lastKey: '', lastTable: undefined, lastRuleChain: '',
    lastRuleTable: undefined };
  let at = 0;
  let lineNo = 0;
  while (at < text.length) {
    let nl = text.indexOf('\n', at);
    if (nl < 0) nl = text.length;
    const line = text.slice(at, nl);
    at = nl + 1;
    lineNo++;
    const c = line.charCodeAt(0);
    // A line starting with a letter is neither blank nor a comment.
    if (!(c > 0x20 && c !== 0x23) && (line === '' || c === 0x23 /* # */ ||
      line.trim() === '' || line.trimStart()[0] === '#')) {
      continue;
    }
    transactionLine(line, lineNo, st);
  }
  for (const t of st.tables.values()) t.finish();
}

/** `line` has the word `w` at [s, e). */
function wordIs(line: string, s: number, e: number, w: string): boolean {
  return e - s === w.length && line.startsWith(w, s);
}

function transactionLine(line: string, lineNo: number, st: TxState): void {
  if (!balanced(line)) fail(lineNo, 'unbalanced braces or quotes (input truncated?)', line);
  // verb object family table rest, as line.split(' ', 5) would cut them (an empty one: skip).
  const s1 = line.indexOf(' ');
  if (s1 <= 0) return;
  const s2 = line.indexOf(' ', s1 + 1);
  if (s2 < 0 || s2 === s1 + 1) return;
  const s3 = line.indexOf(' ', s2 + 1);
  if (s3 < 0 || s3 === s2 + 1) return;
  let s4 = line.indexOf(' ', s3 + 1);
  if (s4 < 0) s4 = line.length;
  if (s4 === s3 + 1) return;
  // (No closures here: the loader names each one it creates, per line.)
  const verb = s1 === 3 && line.startsWith('add') ? 'add' : line.slice(0, s1);
  const removes = verb === 'delete' || verb === 'destroy';
  let t: TableCheck | undefined;
  if (st.lastTable && s4 - s2 - 1 === st.lastKey.length && line.startsWith(st.lastKey, s2 + 1)) {
    t = st.lastTable;
  } else {
    const key = line.slice(s2 + 1, s4);
    t = st.tables.get(key);
    st.lastKey = key;
    st.lastTable = t;
  }
  if (wordIs(line, s1 + 1, s2, 'table')) {
    const key = line.slice(s2 + 1, s4);
    if (removes) st.tables.delete(key);
    else if (!t) st.tables.set(key, new TableCheck(line.slice(s2 + 1, s3)));
    st.lastTable = undefined;
    st.lastRuleChain = '';
    return;
  }
  if (!t) {
    if (removes || verb === 'flush') return;
    fail(lineNo, `table ${line.slice(s2 + 1, s3)} ${line.slice(s3 + 1, s4)} does not exist`,
      line);
  }
  const from = s4 + 1;
  let sp = line.indexOf(' ', from);
  if (from >= line.length) sp = -1;
  const nameEnd = sp < 0 ? Math.max(from, line.length) : sp;
  const object = line.slice(s1 + 1, s2);
  if (object === 'chain') {
    st.lastRuleChain = '';
    if (removes) t.deleteChain(line.slice(from, nameEnd));
    else if (verb !== 'flush') {
      const n = line.slice(from, nameEnd);
      t.addChain(n);
      if (sp >= 0 && /\bhook\s/.test(line.slice(sp + 1))) t.baseChains.add(n);
    }
  } else if (object === 'set' || object === 'map') {
    if (removes) t.sets.delete(line.slice(from, nameEnd));
    else if (verb !== 'flush') {
      const body = sp < 0 ? '' : line.slice(sp + 1);
      const type = /\btype ([^;}]+?)\s*[;}]/.exec(body)?.[1];
      t.sets.set(line.slice(from, nameEnd), { keyTypes: keyTypesOf(type) });
    }
  } else if (object === 'rule') {
    if (verb === 'delete') return;
    let chain = st.lastRuleChain;
    if (chain === '' || st.lastRuleTable !== t || !wordIs(line, from, nameEnd, chain)) {
      chain = line.slice(from, nameEnd);
      if (!t.hasChain(chain)) fail(lineNo, `chain ${chain} does not exist`, line);
      st.lastRuleChain = chain;
      st.lastRuleTable = t;
    }
    if (sp >= 0 && line.indexOf('"', sp + 1) >= 0) {
      const words2 = splitWords(line.slice(sp + 1));
      let k = 0;
      while (words2[k] === 'index' || words2[k] === 'handle' || words2[k] === 'position') k += 2;
      t.rule(chain, k ? words2.slice(k) : words2, lineNo, line);
      return;
    }
    const n = wordOffsets(line, sp < 0 ? line.length : sp + 1, ' ');
    let k = 0;
    while (k < n && (wordIs(line, words.ts[k]!, words.te[k]!, 'index') ||
      wordIs(line, words.ts[k]!, words.te[k]!, 'handle') ||
      wordIs(line, words.ts[k]!, words.te[k]!, 'position'))) {
      k += 2;
    }
    t.ruleAt(chain, line, k, n, lineNo);
  } else if (object === 'element') {
    if (removes) return;
    const b = sp < 0 ? '' : line.slice(sp + 1);
    const open = b.indexOf('{');
    const close = b.lastIndexOf('}');
    if (open < 0 || close < open) fail(lineNo, 'expected "{ ... }"', line);
    const n = line.slice(from, nameEnd);
    for (const part of splitTopLevel(b.slice(open + 1, close).trim())) {
      const e = parseListElement(part) ?? fail(lineNo, `bad element "${part}"`, line);
      t.element(n, e.key, e.value, lineNo, line);
    }
  }
}

/** Words k.. of the rule (TS/TE), at most `max`, as strings. */
function wordsAt(line: string, k: number, n: number, max: number): string[] {
  const out: string[] = [];
  for (let i = k; i < n && out.length < max; i++) out.push(line.slice(words.ts[i], words.te[i]));
  return out;
}

/** The words of a match's value from word k: `!= X`, `X` or `{ X, Y }` (eachValue's input). */
function valueWordsAt(line: string, k: number, n: number): string[] {
  let end = k;
  const c = k < n ? line.charCodeAt(words.ts[k]!) : 0;
  if (c === 0x21 || c === 0x3d /* != == */) end++;
  if (end < n && line.charCodeAt(words.ts[end]!) === 0x7b /* { */) {
    while (end < n && line.charCodeAt(words.te[end]! - 1) !== 0x7d /* } */) end++;
  }
  return wordsAt(line, k, n, end - k + 1);
}

/** Braces balance outside quotes (a line cut short leaves one open). */
function balanced(line: string): boolean {
  const open = line.indexOf('{');
  const quoted = line.includes('"');
  if (open < 0 && !quoted) return true;
  if (!quoted) {
    // No quotes: the braces alone, found with indexOf (a vmap line is 800 characters).
    let depth = 1;
    let close = line.indexOf('}');
    if (close >= 0 && close < open) return false;
    for (let o = line.indexOf('{', open + 1); ;) {
      if (o >= 0 && (close < 0 || o < close)) {
        depth++;
        o = line.indexOf('{', o + 1);
      } else if (close >= 0) {
        if (--depth < 0) return false;
        close = line.indexOf('}', close + 1);
      } else {
        return depth === 0;
      }
    }
  }
  let depth = 0;
  let inQ = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line.charCodeAt(i);
    if (ch === 0x5c /* \\ */ && inQ) i++;
    else if (ch === 0x22 /* " */) inQ = !inQ;
    else if (!inQ && ch === 0x7b /* { */) depth++;
    else if (!inQ && ch === 0x7d /* } */ && --depth < 0) return false;
  }
  return depth === 0 && !inQ;
}

// ---- a parsed listing (text or JSON)

function validateRuleset(rs: NftRuleset, text: string): void {
  for (const table of rs.tables.values()) {
    const t = new TableCheck(table.family);
    for (const c of table.chains.values()) {
      t.addChain(c.name);
      if (c.hook !== undefined) t.baseChains.add(c.name);
    }
    for (const s of table.sets.values()) t.sets.set(s.name, { keyTypes: keyTypesOf(s.type) });
    const label = `table ${table.family} ${table.name}`;
    for (const c of table.chains.values()) {
      c.rules.forEach((r, i) => {
        const body = r.tokens.join(' ');
        t.rule(c.name, r.tokens, locate(text, body, `${label} chain ${c.name} rule ${i + 1}`),
          body);
      });
    }
    for (const s of table.sets.values()) {
      for (const e of s.elements.values()) {
        const body = e.key.join(' . ');
        t.element(s.name, e.key, e.value, locate(text, body, `${label} set ${s.name}`), body);
      }
    }
    t.finish();
  }
}

/** Finds the line holding `needle` (the first) when asked, else answers `fallback`. */
function locate(text: string, needle: string, fallback: string): Where {
  return () => {
    const at = needle ? text.indexOf(needle) : -1;
    if (at < 0) return fallback;
    let n = 1;
    for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) n++;
    return n;
  };
}
