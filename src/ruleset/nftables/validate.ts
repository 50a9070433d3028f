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
import { findLoop, type JumpEdge } from '../jump-loop.js';
import { parseListElement, parseListText } from './list-text.js';
import { parseListJson } from './list-json.js';
import type { NftRuleset } from './model.js';
import { splitWords } from './tokens.js';
import { splitTopLevel } from './transaction.js';

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
  readonly chains = new Set<string>();
  /** Chains with a hook: where the kernel's loop check starts. */
  readonly baseChains = new Set<string>();
  readonly sets = new Map<string, SetInfo>();
  private readonly chainRefs = new Map<string, { where: Where; text: string }>();
  private readonly setRefs = new Map<string, { where: Where; text: string }>();
  private readonly edges = new Map<string, JumpEdge[]>();

  constructor(readonly family: string) {}

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
    if (!this.chainRefs.has(to)) this.chainRefs.set(to, { where, text });
    this.edge(from, to, where, text);
  }

  private edge(from: string, to: string, where: Where, text: string): void {
    let out = this.edges.get(from);
    if (!out) this.edges.set(from, (out = []));
    out.push({ to, line: typeof where === 'number' ? where : 0, text, ref: where });
  }

  finish(): void {
    for (const [name, r] of this.chainRefs) {
      if (!this.chains.has(name)) fail(r.where, `chain ${name} does not exist`, r.text);
    }
    for (const [name, r] of this.setRefs) {
      if (!this.sets.has(name)) fail(r.where, `set or map @${name} does not exist`, r.text);
    }
    const loop = findLoop(this.edges, this.baseChains);
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

function validateTransaction(text: string): void {
  const tables = new Map<string, TableCheck>();
  let at = 0;
  let lineNo = 0;
  while (at < text.length) {
    let nl = text.indexOf('\n', at);
    if (nl < 0) nl = text.length;
    const line = text.slice(at, nl);
    at = nl + 1;
    lineNo++;
    const c = line.charCodeAt(0);
    if (line === '' || c === 0x23 /* # */ || line.trim() === '' || line.trimStart()[0] === '#') {
      continue;
    }
    transactionLine(line, lineNo, tables);
  }
  for (const t of tables.values()) t.finish();
}

function transactionLine(line: string, lineNo: number, tables: Map<string, TableCheck>): void {
  if (!balanced(line)) fail(lineNo, 'unbalanced braces or quotes (input truncated?)', line);
  const words = line.split(' ', 5);
  const [verb, object, family, table] = words;
  if (!verb || !object || !family || !table) return;
  const rest = line.slice(verb.length + object.length + family.length + table.length + 4);
  const key = `${family} ${table}`;
  let t = tables.get(key);
  if (object === 'table') {
    if (verb === 'delete' || verb === 'destroy') tables.delete(key);
    else if (!t) tables.set(key, new TableCheck(family));
    return;
  }
  if (!t) {
    if (verb === 'delete' || verb === 'destroy' || verb === 'flush') return;
    fail(lineNo, `table ${family} ${table} does not exist`, line);
  }
  const sp = rest.indexOf(' ');
  const name = sp < 0 ? rest : rest.slice(0, sp);
  const body = sp < 0 ? '' : rest.slice(sp + 1);
  switch (object) {
    case 'chain':
      if (verb === 'delete' || verb === 'destroy') t.chains.delete(name);
      else if (verb !== 'flush') {
        t.chains.add(name);
        if (/\bhook\s/.test(body)) t.baseChains.add(name);
      }
      return;
    case 'set': case 'map':
      if (verb === 'delete' || verb === 'destroy') t.sets.delete(name);
      else if (verb !== 'flush') {
        t.sets.set(name, { keyTypes: keyTypesOf(/\btype ([^;}]+?)\s*[;}]/.exec(body)?.[1]) });
      }
      return;
    case 'rule': {
      if (verb === 'delete') return;
      if (!t.chains.has(name)) fail(lineNo, `chain ${name} does not exist`, line);
      const words2 = body.includes('"') ? splitWords(body) : body.split(' ');
      let from = 0;
      while (words2[from] === 'index' || words2[from] === 'handle' || words2[from] === 'position') {
        from += 2;
      }
      t.rule(name, from ? words2.slice(from) : words2, lineNo, line);
      return;
    }
    case 'element': {
      if (verb === 'delete' || verb === 'destroy') return;
      const open = body.indexOf('{');
      const close = body.lastIndexOf('}');
      if (open < 0 || close < open) fail(lineNo, 'expected "{ ... }"', line);
      for (const part of splitTopLevel(body.slice(open + 1, close).trim())) {
        const e = parseListElement(part) ?? fail(lineNo, `bad element "${part}"`, line);
        t.element(name, e.key, e.value, lineNo, line);
      }
      return;
    }
    default:
      return;
  }
}

/** Braces balance outside quotes (a line cut short leaves one open). */
function balanced(line: string): boolean {
  if (!line.includes('{') && !line.includes('"')) return true;
  let depth = 0;
  let inQ = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '\\' && inQ) i++;
    else if (ch === '"') inQ = !inQ;
    else if (!inQ && ch === '{') depth++;
    else if (!inQ && ch === '}' && --depth < 0) return false;
  }
  return depth === 0 && !inQ;
}

// ---- a parsed listing (text or JSON)

function validateRuleset(rs: NftRuleset, text: string): void {
  for (const table of rs.tables.values()) {
    const t = new TableCheck(table.family);
    for (const c of table.chains.values()) {
      t.chains.add(c.name);
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
