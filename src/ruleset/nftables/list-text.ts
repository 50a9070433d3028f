// `nft list ruleset` / `nft list table F T` text ↔ the model. Parses what nft prints (tabs,
// `elements = { a, b,\n\t\t\t     c }` continuation lines, `# handle N` with -a, element
// timeouts/expires, named priorities); formats in nft's layout, so text this module formats
// parses back to the same model and formats back to the same bytes.

import { kdpError } from '../../errors.js';
import { formatDuration, parseDuration } from './duration.js';
import { elementKey, isFamily, newTable, tableKey, type NftChain, type NftElement,
  type NftRule, type NftRuleset, type NftSet, type NftTable } from './model.js';
import { formatPriority, parsePriority } from './priority.js';
import { quote, splitRuleComment, splitWords, unquote } from './tokens.js';
import { splitTopLevel } from './transaction.js';

interface Cursor {
  readonly lines: readonly string[];
  i: number;
}

function fail(c: Cursor, reason: string, lineNo = c.i + 1): never {
  const line = c.lines[lineNo - 1] ?? '';
  throw kdpError('KDP_PARSE', `nft listing line ${lineNo}: ${reason}: ${line.trim()}`, {
    causes: [{ field: `line ${lineNo}`, reason: 'ParseError', message: reason }],
  });
}

/** Parse `nft list ruleset` (or `list table`) output. */
export function parseListText(text: string): NftRuleset {
  const c: Cursor = { lines: text.split('\n'), i: 0 };
  const rs: NftRuleset = { tables: new Map() };
  for (; c.i < c.lines.length; c.i++) {
    const raw = c.lines[c.i]!.trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const { text: line, handle } = stripHandle(raw);
    const m = /^table (\S+) (\S+) \{$/.exec(line);
    if (!m || !isFamily(m[1]!)) fail(c, 'expected "table FAMILY NAME {"');
    const t = newTable(m[1] as NftTable['family'], m[2]!);
    if (handle !== undefined) t.handle = handle;
    c.i++;
    parseTableBody(c, t);
    rs.tables.set(tableKey(t.family, t.name), t);
  }
  return rs;
}

function parseTableBody(c: Cursor, t: NftTable): void {
  for (; c.i < c.lines.length; c.i++) {
    const { text: line, handle } = stripHandle(c.lines[c.i]!.trim());
    if (line === '') continue;
    if (line === '}') return;
    let m: RegExpExecArray | null;
    if ((m = /^comment (".*")$/.exec(line))) t.comment = unquote(m[1]!) ?? fail(c, 'bad comment');
    else if ((m = /^flags (\S+)$/.exec(line))) t.flags = m[1]!.split(',');
    else if ((m = /^(set|map) (\S+) \{$/.exec(line))) {
      const name = m[2]!;
      c.i++;
      t.sets.set(name, withHandle(parseSetBody(c, m[1] as 'set' | 'map', name), handle));
    } else if ((m = /^chain (\S+) \{$/.exec(line))) {
      const name = m[1]!;
      c.i++;
      t.chains.set(name, withHandle(parseChainBody(c, name), handle));
    } else fail(c, 'unknown table statement');
  }
  fail(c, 'table not closed', c.lines.length);
}

function withHandle<T extends object>(o: T, handle: number | undefined): T {
  return handle === undefined ? o : { ...o, handle };
}

function stripHandle(line: string): { text: string; handle?: number } {
  const m = /^(.*?)\s*# handle (\d+)$/.exec(line);
  return m ? { text: m[1]!, handle: Number(m[2]) } : { text: line };
}

function parseSetBody(c: Cursor, kind: 'set' | 'map', name: string): NftSet {
  const s: { -readonly [K in keyof NftSet]: NftSet[K] } = {
    kind, name, type: '', flags: [], elements: new Map(),
  };
  for (; c.i < c.lines.length; c.i++) {
    const line = c.lines[c.i]!.trim();
    if (line === '') continue;
    if (line === '}') return s;
    const [word, ...rest] = line.split(' ');
    const arg = rest.join(' ');
    switch (word) {
      case 'type': s.type = arg; break;
      case 'typeof': s.typeof = arg; break;
      case 'flags': s.flags = arg.split(','); break;
      case 'size': s.size = Number(arg); break;
      case 'policy': s.policy = arg; break;
      case 'auto-merge': s.autoMerge = true; break;
      case 'comment': s.comment = unquote(arg) ?? fail(c, 'bad comment'); break;
      case 'timeout': s.timeout = parseDuration(arg) ?? fail(c, 'bad duration'); break;
      case 'gc-interval': s.gcInterval = parseDuration(arg) ?? fail(c, 'bad duration'); break;
      case 'elements': readElements(c, line, s.elements); break;
      default: fail(c, `unknown ${kind} property "${word}"`);
    }
  }
  return fail(c, `${kind} not closed`, c.lines.length);
}

/** `elements = { a, b,` + continuation lines up to the closing `}`. */
function readElements(c: Cursor, first: string, into: Map<string, NftElement>): void {
  const start = c.i + 1;
  let text = first.replace(/^elements = \{ ?/, '');
  while (!/ ?\}$/.test(text) || unbalanced(text)) {
    c.i++;
    if (c.i >= c.lines.length) fail(c, 'elements not closed', start);
    text += ' ' + c.lines[c.i]!.trim();
  }
  text = text.replace(/ ?\}$/, '');
  for (const part of splitTopLevel(text)) {
    const e = parseListElement(part) ?? fail(c, `bad element "${part}"`, start);
    into.set(elementKey(e.key), e);
  }
}

function unbalanced(text: string): boolean {
  let depth = 1;
  let inQ = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') inQ = !inQ;
    else if (!inQ && ch === '{') depth++;
    else if (!inQ && ch === '}') depth--;
  }
  return depth > 0;
}

const ELEMENT_ATTRS = new Set(['timeout', 'expires', 'comment', 'counter']);

/** `KEY [timeout T] [expires E] [comment "C"] [: VALUE]`. */
export function parseListElement(text: string): NftElement | undefined {
  let keyText = text;
  let value: string | undefined;
  const words = splitWords(text);
  const colon = words.indexOf(':');
  if (colon >= 0) {
    keyText = words.slice(0, colon).join(' ');
    value = words.slice(colon + 1).join(' ');
  }
  const kw = splitWords(keyText);
  const keyWords: string[] = [];
  let i = 0;
  while (i < kw.length && !ELEMENT_ATTRS.has(kw[i]!)) keyWords.push(kw[i++]!);
  if (keyWords.length === 0) return undefined;
  const e: { -readonly [K in keyof NftElement]: NftElement[K] } = {
    key: keyWords.join(' ').split(' . '),
  };
  while (i < kw.length) {
    const a = kw[i++]!;
    const v = kw[i++];
    if (v === undefined) return undefined;
    if (a === 'timeout') e.timeout = v;
    else if (a === 'expires') e.expires = v;
    else if (a === 'comment') e.comment = unquote(v);
    else if (a === 'counter') i += 2; // counter packets N bytes M: dropped
  }
  if (value !== undefined) e.value = value.split(' . ');
  return e;
}

function parseChainBody(c: Cursor, name: string): NftChain {
  const ch: { -readonly [K in keyof NftChain]: NftChain[K] } = { name, rules: [] };
  for (; c.i < c.lines.length; c.i++) {
    const { text: line, handle } = stripHandle(c.lines[c.i]!.trim());
    if (line === '') continue;
    if (line === '}') return ch;
    if (line.startsWith('type ') && ch.rules.length === 0 && ch.type === undefined) {
      parseBaseChainLine(c, line, ch);
    } else if (line.startsWith('comment "') && ch.rules.length === 0 && unquote(line.slice(8))) {
      ch.comment = unquote(line.slice(8))!;
    } else {
      const { tokens, comment } = splitRuleComment(line);
      const rule: { -readonly [K in keyof NftRule]: NftRule[K] } = { tokens };
      if (comment !== undefined) rule.comment = comment;
      if (handle !== undefined) rule.handle = handle;
      ch.rules.push(rule);
    }
  }
  return fail(c, 'chain not closed', c.lines.length);
}

/** `type filter hook prerouting [device "x"] priority dstnat - 10; policy accept;` */
function parseBaseChainLine(c: Cursor, line: string,
  ch: { -readonly [K in keyof NftChain]: NftChain[K] }): void {
  for (const clause of line.split(';').map((s) => s.trim()).filter(Boolean)) {
    const m = /^type (\S+) hook (\S+)(?: device (\S+))? priority (.+)$/.exec(clause);
    if (m) {
      ch.type = m[1]!;
      ch.hook = m[2]!;
      if (m[3] !== undefined) ch.device = unquote(m[3]) ?? m[3];
      ch.priority = parsePriority(m[4]!) ?? fail(c, `unknown priority "${m[4]}"`);
    } else if (clause.startsWith('policy ')) ch.policy = clause.slice(7);
    else fail(c, `unknown chain property "${clause}"`);
  }
}

/** Elements per line nft uses for a set's key type (maps and concatenations: one). */
function elementsPerLine(s: NftSet): number {
  if (s.kind === 'map' || s.type.includes(' . ')) return 1;
  if (s.type === 'inet_service' || s.type === 'inet_proto') return 5;
  if (s.type === 'ipv4_addr' || s.type === 'mark') return 2;
  return 1;
}

function formatListElement(e: NftElement): string {
  let s = elementKey(e.key);
  if (e.timeout !== undefined) s += ` timeout ${e.timeout}`;
  if (e.expires !== undefined) s += ` expires ${e.expires}`;
  if (e.comment !== undefined) s += ` comment ${quote(e.comment)}`;
  if (e.value !== undefined) s += ` : ${e.value.join(' . ')}`;
  return s;
}

function formatSet(s: NftSet): string[] {
  const out = [`\t${s.kind} ${s.name} {${handleSuffix(s.handle)}`];
  out.push(s.typeof !== undefined ? `\t\ttypeof ${s.typeof}` : `\t\ttype ${s.type}`);
  if (s.policy !== undefined) out.push(`\t\tpolicy ${s.policy}`);
  if (s.size !== undefined) out.push(`\t\tsize ${s.size}`);
  if (s.flags.length > 0) out.push(`\t\tflags ${s.flags.join(',')}`);
  if (s.timeout !== undefined) out.push(`\t\ttimeout ${formatDuration(s.timeout)}`);
  if (s.gcInterval !== undefined) out.push(`\t\tgc-interval ${formatDuration(s.gcInterval)}`);
  if (s.autoMerge) out.push('\t\tauto-merge');
  if (s.comment !== undefined) out.push(`\t\tcomment ${quote(s.comment)}`);
  const els = [...s.elements.values()].map(formatListElement);
  if (els.length > 0) {
    const per = elementsPerLine(s);
    const rows: string[] = [];
    for (let i = 0; i < els.length; i += per) rows.push(els.slice(i, i + per).join(', '));
    out.push(`\t\telements = { ${rows.join(',\n\t\t\t     ')} }`);
  }
  out.push('\t}');
  return out;
}

function formatChain(ch: NftChain): string[] {
  const out = [`\tchain ${ch.name} {${handleSuffix(ch.handle)}`];
  if (ch.type !== undefined) {
    let head = `\t\ttype ${ch.type} hook ${ch.hook ?? ''}`;
    if (ch.device !== undefined) head += ` device ${quote(ch.device)}`;
    head += ` priority ${formatPriority(ch.priority ?? 0, ch.hook ?? '')};`;
    head += ` policy ${ch.policy ?? 'accept'};`;
    out.push(head);
  }
  if (ch.comment !== undefined) out.push(`\t\tcomment ${quote(ch.comment)}`);
  for (const r of ch.rules) {
    let line = `\t\t${r.tokens.join(' ')}`;
    if (r.comment !== undefined) line += ` comment ${quote(r.comment)}`;
    if (r.handle !== undefined) line += ` # handle ${r.handle}`;
    out.push(line);
  }
  out.push('\t}');
  return out;
}

function handleSuffix(h: number | undefined): string {
  return h === undefined ? '' : ` # handle ${h}`;
}

/** Format as `nft list ruleset` does: sets and maps first, then chains. */
export function formatListText(rs: NftRuleset): string {
  const out: string[] = [];
  for (const t of rs.tables.values()) {
    out.push(`table ${t.family} ${t.name} {${handleSuffix(t.handle)}`);
    if (t.comment !== undefined) out.push(`\tcomment ${quote(t.comment)}`);
    if (t.flags?.length) out.push(`\tflags ${t.flags.join(',')}`);
    const blocks = [...[...t.sets.values()].map(formatSet),
      ...[...t.chains.values()].map(formatChain)];
    blocks.forEach((b, i) => {
      out.push(...b);
      if (i < blocks.length - 1) out.push('');
    });
    out.push('}');
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}
