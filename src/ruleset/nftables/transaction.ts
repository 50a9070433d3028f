// The transaction text kube-proxy hands to `nft -f`, one operation per line, exactly as
// knftables writes it: `VERB OBJECT FAMILY TABLE ...`. Parsing and formatting are inverse for
// every line knftables produces (`format(parse(x)) === x`).

import { kdpError } from '../../errors.js';
import { elementKey, isFamily, type NftElement, type NftFamily, type NftRule } from './model.js';
import { formatRuleBody, quote, splitRuleComment, splitWords, unquote } from './tokens.js';

export type NftVerb = 'add' | 'create' | 'insert' | 'replace' | 'delete' | 'destroy' | 'flush';
const VERBS: readonly string[] = ['add', 'create', 'insert', 'replace', 'delete', 'destroy',
  'flush'];

export interface NftChainSpec {
  readonly name: string;
  readonly type?: string;
  readonly hook?: string;
  readonly priority?: number;
  readonly policy?: string;
  readonly device?: string;
  readonly comment?: string;
}

export interface NftSetSpec {
  readonly name: string;
  readonly type?: string;
  readonly typeof?: string;
  readonly flags?: readonly string[];
  readonly timeout?: number;
  readonly gcInterval?: number;
  readonly size?: number;
  readonly policy?: string;
  readonly autoMerge?: boolean;
  readonly comment?: string;
}

interface OpBase {
  readonly verb: NftVerb;
  readonly family: NftFamily;
  readonly table: string;
}

export type NftOp =
  | (OpBase & {
      readonly object: 'table';
      readonly comment?: string;
      readonly flags?: readonly string[];
    })
  | (OpBase & { readonly object: 'chain'; readonly chain: NftChainSpec })
  | (OpBase & {
      readonly object: 'rule';
      readonly chain: string;
      readonly rule?: NftRule;
      readonly index?: number;
      readonly handle?: number;
    })
  | (OpBase & { readonly object: 'set' | 'map'; readonly set: NftSetSpec })
  | (OpBase & {
      readonly object: 'element';
      readonly set: string;
      readonly elements: readonly NftElement[];
    });

function parseError(lineNo: number, line: string, reason: string): Error {
  return kdpError('KDP_PARSE', `nft transaction line ${lineNo}: ${reason}: ${line}`, {
    causes: [{ field: `line ${lineNo}`, reason: 'ParseError', message: reason }],
  });
}

/** Parse a whole transaction; blank lines and `#` comments are skipped. */
export function parseTransaction(text: string | readonly string[]): NftOp[] {
  const ops: NftOp[] = [];
  let lineNo = 0;
  // Pieces (an artifact's chunks) each end with a newline; line numbers run on across them.
  for (const piece of typeof text === 'string' ? [text] : text) {
    const lines = piece.split('\n');
    const n = piece.endsWith('\n') ? lines.length - 1 : lines.length;
    for (let i = 0; i < n; i++) {
      const line = lines[i]!;
      lineNo++;
      if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
      ops.push(parseOperation(line, lineNo));
    }
  }
  return ops;
}

/** Parse one operation line; `lineNo` is only used in errors. */
export function parseOperation(line: string, lineNo = 1): NftOp {
  const m = /^(\S+) (\S+) (\S+) (\S+)(?: (.*))?$/.exec(line);
  if (!m) throw parseError(lineNo, line, 'expected "VERB OBJECT FAMILY TABLE ..."');
  const [, verb, object, family, table] = m as unknown as [string, string, string, string, string];
  const rest = m[5] ?? '';
  if (!VERBS.includes(verb)) throw parseError(lineNo, line, `unknown verb "${verb}"`);
  if (!isFamily(family)) throw parseError(lineNo, line, `unknown family "${family}"`);
  const base = { verb: verb as NftVerb, family, table };
  const fail = (reason: string): never => {
    throw parseError(lineNo, line, reason);
  };
  switch (object) {
    case 'table':
      return { ...base, object, ...parseTableRest(rest, fail) };
    case 'chain':
      return { ...base, object, chain: parseChainRest(rest, fail) };
    case 'rule':
      return { ...base, object, ...parseRuleRest(rest, base.verb, fail) };
    case 'set':
    case 'map':
      return { ...base, object, set: parseSetRest(rest, fail) };
    case 'element':
      return { ...base, object, ...parseElementRest(rest, fail) };
    default:
      return fail(`unknown object type "${object}"`);
  }
}

type Fail = (reason: string) => never;

/** `{ a b ; c d ; }` → [[a, b], [c, d]]; undefined when `words` is empty. */
function braceClauses(words: string[], fail: Fail): string[][] {
  if (words[0] !== '{' || words[words.length - 1] !== '}') fail('expected "{ ... }"');
  const clauses: string[][] = [];
  let cur: string[] = [];
  for (const w of words.slice(1, -1)) {
    if (w === ';') {
      clauses.push(cur);
      cur = [];
    } else cur.push(w);
  }
  if (cur.length > 0) fail('clause not ended by ";"');
  return clauses;
}

function commentOf(words: string[], fail: Fail): string {
  const c = words.length === 1 ? unquote(words[0]!) : undefined;
  return c ?? fail('comment must be one quoted string');
}

function parseTableRest(rest: string, fail: Fail): { comment?: string; flags?: string[] } {
  if (rest === '') return {};
  const out: { comment?: string; flags?: string[] } = {};
  for (const [k, ...v] of braceClauses(splitWords(rest), fail)) {
    if (k === 'comment') out.comment = commentOf(v, fail);
    else if (k === 'flags') out.flags = v.join('').split(',');
    else fail(`unknown table property "${k}"`);
  }
  return out;
}

function parseChainRest(rest: string, fail: Fail): NftChainSpec {
  const words = splitWords(rest);
  const name = words.shift() ?? fail('missing chain name');
  if (words.length === 0) return { name };
  const spec: { -readonly [K in keyof NftChainSpec]: NftChainSpec[K] } = { name };
  for (const clause of braceClauses(words, fail)) {
    if (clause[0] === 'type') {
      const [, type, hookWord, hook, ...more] = clause;
      if (hookWord !== 'hook' || !type || !hook) fail('expected "type T hook H"');
      spec.type = type;
      spec.hook = hook;
      if (more[0] === 'device') {
        spec.device = unquote(more[1] ?? '') ?? fail('device must be quoted');
        more.splice(0, 2);
      }
      if (more[0] === 'priority') spec.priority = parsePriorityWords(more.slice(1), fail);
      else if (more.length > 0) fail(`unexpected "${more.join(' ')}"`);
    } else if (clause[0] === 'priority') {
      spec.priority = parsePriorityWords(clause.slice(1), fail);
    } else if (clause[0] === 'policy') {
      spec.policy = clause[1] ?? fail('missing policy');
    } else if (clause[0] === 'comment') {
      spec.comment = commentOf(clause.slice(1), fail);
    } else fail(`unknown chain property "${clause[0]}"`);
  }
  return spec;
}

function parsePriorityWords(words: string[], fail: Fail): number {
  const n = words.length === 1 ? Number(words[0]) : NaN;
  return Number.isInteger(n) ? n : fail(`priority must be a number, got "${words.join(' ')}"`);
}

function parseRuleRest(
  rest: string,
  verb: NftVerb,
  fail: Fail,
): { chain: string; rule?: NftRule; index?: number; handle?: number } {
  const m = /^(\S+)(?: index (\d+))?(?: handle (\d+))?(?: (.*))?$/.exec(rest);
  if (!m) return fail('expected "CHAIN [index N|handle N] RULE"');
  const out: { chain: string; rule?: NftRule; index?: number; handle?: number } = { chain: m[1]! };
  if (m[2] !== undefined) out.index = Number(m[2]);
  if (m[3] !== undefined) out.handle = Number(m[3]);
  const body = m[4] ?? '';
  if (verb === 'delete' || verb === 'destroy') {
    if (out.handle === undefined || body !== '') fail('rule delete takes only a handle');
    return out;
  }
  if (body === '') fail('empty rule');
  const { tokens, comment } = splitRuleComment(body);
  out.rule = comment === undefined ? { tokens } : { tokens, comment };
  return out;
}

function parseSetRest(rest: string, fail: Fail): NftSetSpec {
  const words = splitWords(rest);
  const name = words.shift() ?? fail('missing set name');
  if (words.length === 0) return { name };
  const spec: { -readonly [K in keyof NftSetSpec]: NftSetSpec[K] } = { name };
  for (const [k, ...v] of braceClauses(words, fail)) {
    if (k === 'type') spec.type = v.join(' ');
    else if (k === 'typeof') spec.typeof = v.join(' ');
    else if (k === 'flags') spec.flags = v.join('').split(',');
    else if (k === 'timeout') spec.timeout = parseSeconds(v, fail);
    else if (k === 'gc-interval') spec.gcInterval = parseSeconds(v, fail);
    else if (k === 'size') spec.size = Number(v[0]);
    else if (k === 'policy') spec.policy = v[0];
    else if (k === 'auto-merge') spec.autoMerge = true;
    else if (k === 'comment') spec.comment = commentOf(v, fail);
    else fail(`unknown set property "${k}"`);
  }
  return spec;
}

function parseSeconds(v: string[], fail: Fail): number {
  const m = v.length === 1 ? /^(\d+)s$/.exec(v[0]!) : null;
  return m ? Number(m[1]) : fail(`duration must be "Ns", got "${v.join(' ')}"`);
}

function parseElementRest(rest: string, fail: Fail): { set: string; elements: NftElement[] } {
  const m = /^(\S+) \{ (.*) \}$/.exec(rest);
  if (!m) return fail('expected "SET { ELEMENT }"');
  return { set: m[1]!, elements: splitTopLevel(m[2]!).map((e) => parseElement(e, fail)) };
}

/** Split `a , b` / `a, b` at commas outside quotes and braces. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      while (++i < text.length && text[i] !== '"') if (text[i] === '\\') i++;
    } else if (ch === '{') depth++;
    else if (ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter((p) => p !== '');
}

/** `KEY [comment "C"] [: VALUE]`, key parts joined by ` . `. */
export function parseElement(text: string, fail: Fail): NftElement {
  let keyText = text;
  let valueText: string | undefined;
  const colon = indexOutsideQuotes(text, ' : ');
  if (colon >= 0) {
    keyText = text.slice(0, colon);
    valueText = text.slice(colon + 3);
  }
  const { tokens, comment } = splitRuleComment(keyText);
  if (tokens.length === 0) fail('element without key');
  const key = tokens.join(' ').split(' . ');
  const el: { key: string[]; value?: string[]; comment?: string } = { key };
  if (comment !== undefined) el.comment = comment;
  if (valueText !== undefined) el.value = valueText.split(' . ');
  return el;
}

function indexOutsideQuotes(text: string, needle: string): number {
  let inQuote = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') inQuote = !inQuote;
    else if (text[i] === '\\' && inQuote) i++;
    else if (!inQuote && text.startsWith(needle, i)) return i;
  }
  return -1;
}

export function formatElement(e: NftElement, withValue = true): string {
  let s = elementKey(e.key);
  if (withValue && e.comment !== undefined) s += ` comment ${quote(e.comment)}`;
  if (withValue && e.value !== undefined) s += ` : ${e.value.join(' . ')}`;
  return s;
}

function formatChainProps(c: NftChainSpec): string {
  if (c.type === undefined && c.comment === undefined) return '';
  let s = ' {';
  if (c.type !== undefined) {
    s += ` type ${c.type} hook ${c.hook ?? ''}`;
    if (c.device !== undefined) s += ` device ${quote(c.device)}`;
    s += ` priority ${c.priority ?? 0} ;`;
    if (c.policy !== undefined) s += ` policy ${c.policy} ;`;
  }
  if (c.comment !== undefined) s += ` comment ${quote(c.comment)} ;`;
  return `${s} }`;
}

export function formatSetProps(s: NftSetSpec): string {
  let out = ' {';
  out += s.type !== undefined ? ` type ${s.type} ;` : ` typeof ${s.typeof ?? ''} ;`;
  if (s.flags && s.flags.length > 0) out += ` flags ${s.flags.join(',')} ;`;
  if (s.timeout !== undefined) out += ` timeout ${s.timeout}s ;`;
  if (s.gcInterval !== undefined) out += ` gc-interval ${s.gcInterval}s ;`;
  if (s.size !== undefined) out += ` size ${s.size} ;`;
  if (s.policy !== undefined) out += ` policy ${s.policy} ;`;
  if (s.autoMerge) out += ' auto-merge ;';
  if (s.comment !== undefined) out += ` comment ${quote(s.comment)} ;`;
  return `${out} }`;
}

function isCreate(verb: NftVerb): boolean {
  return verb === 'add' || verb === 'create';
}

/** One operation line, without the newline. */
export function formatOperation(op: NftOp): string {
  const head = `${op.verb} ${op.object} ${op.family} ${op.table}`;
  switch (op.object) {
    case 'table': {
      if (!isCreate(op.verb) || (op.comment === undefined && !op.flags?.length)) return head;
      let s = ' {';
      if (op.comment !== undefined) s += ` comment ${quote(op.comment)} ;`;
      if (op.flags?.length) s += ` flags ${op.flags.join(',')} ;`;
      return `${head}${s} }`;
    }
    case 'chain':
      return `${head} ${op.chain.name}${isCreate(op.verb) ? formatChainProps(op.chain) : ''}`;
    case 'rule': {
      let s = `${head} ${op.chain}`;
      if (op.index !== undefined) s += ` index ${op.index}`;
      else if (op.handle !== undefined) s += ` handle ${op.handle}`;
      if (op.rule) s += ` ${formatRuleBody(op.rule.tokens, op.rule.comment)}`;
      return s;
    }
    case 'set':
    case 'map':
      return `${head} ${op.set.name}${isCreate(op.verb) ? formatSetProps(op.set) : ''}`;
    case 'element': {
      const els = op.elements.map((e) => formatElement(e, isCreate(op.verb))).join(', ');
      return `${head} ${op.set} { ${els} }`;
    }
  }
}

/** The whole transaction, one line per operation, each ending in a newline. */
export function formatTransaction(ops: readonly NftOp[]): string {
  let out = '';
  for (const op of ops) out += formatOperation(op) + '\n';
  return out;
}
