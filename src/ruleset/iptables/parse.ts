// Parser for `iptables-save` output and `iptables-restore` input. Every line must be
// understood; anything else is KDP_PARSE naming the line number and the reason.

import { kdpError } from '../../errors.js';
import { formatArgs } from './format.js';
import type { Counters, IptablesChain, IptablesDocument, IptablesLine, IptablesTable }
  from './model.js';

function fail(lineNo: number, reason: string, text: string): never {
  throw kdpError('KDP_PARSE', `iptables line ${lineNo}: ${reason}: ${text.slice(0, 200)}`, {
    causes: [{ field: `line ${lineNo}`, reason: 'ParseError', message: reason }],
  });
}

/** Splits a rule's arguments; a double-quoted word is one argument (`\"`, `\\` escapes). */
export function splitArgs(text: string, lineNo = 0): string[] {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
    if (i >= n) break;
    let word = '';
    let quoted = false;
    while (i < n && text[i] !== ' ' && text[i] !== '\t') {
      if (text[i] === '"') {
        quoted = true;
        i++;
        while (i < n && text[i] !== '"') {
          if (text[i] === '\\' && i + 1 < n) i++;
          word += text[i++];
        }
        if (i >= n) fail(lineNo, 'unterminated quote', text);
        i++;
      } else {
        word += text[i++];
      }
    }
    out.push(quoted || word !== '' ? word : '');
  }
  return out;
}

const COUNTERS = /^\[(\d+):(\d+)\]$/;
const CHAIN_NAME = /^[^\s]+$/;

function parseCounters(s: string): Counters | undefined {
  const m = COUNTERS.exec(s);
  return m ? { packets: m[1]!, bytes: m[2]! } : undefined;
}

function parseRule(text: string, lineNo: number): IptablesLine {
  let rest = text;
  let counters: Counters | undefined;
  if (rest.startsWith('[')) {
    const sp = rest.indexOf(' ');
    counters = parseCounters(sp < 0 ? rest : rest.slice(0, sp));
    if (!counters || sp < 0) fail(lineNo, 'bad rule counters', text);
    rest = rest.slice(sp + 1);
  }
  const m = /^(-A|-I|-D|-R) (\S+)(?: (.*))?$/.exec(rest);
  if (!m) fail(lineNo, 'expected -A/-I/-D/-R CHAIN', text);
  const op = m[1] as '-A' | '-I' | '-D' | '-R';
  let tail = m[3] ?? '';
  let position: number | undefined;
  if (op === '-I' || op === '-R') {
    const pm = /^(\d+)(?: (.*))?$/.exec(tail);
    if (pm) { position = Number(pm[1]); tail = pm[2] ?? ''; }
    else if (op === '-R') fail(lineNo, '-R needs a rule number', text);
  }
  const args = splitArgs(tail, lineNo);
  const line: IptablesLine = {
    kind: 'rule', op, chain: m[2]!, args,
    ...(position !== undefined ? { position } : {}),
    ...(counters ? { counters } : {}),
    ...(formatArgs(args) !== tail ? { raw: tail } : {}),
  };
  return line;
}

function parseLine(text: string, lineNo: number, inTable: boolean): IptablesLine {
  if (text === '' || text.startsWith('#')) return { kind: 'comment', text };
  if (text.startsWith('*')) {
    if (inTable) fail(lineNo, 'table started before COMMIT of the previous one', text);
    const name = text.slice(1);
    if (!/^[a-z]+$/.test(name)) fail(lineNo, 'bad table name', text);
    return { kind: 'table', name };
  }
  if (!inTable) fail(lineNo, 'line outside a table (missing *table)', text);
  if (text === 'COMMIT') return { kind: 'commit' };
  if (text.startsWith(':')) {
    const parts = text.slice(1).split(' ');
    if (parts.length < 2 || parts.length > 3 || !CHAIN_NAME.test(parts[0]!) || parts[1] === '') {
      fail(lineNo, 'bad chain line (want :NAME POLICY [packets:bytes])', text);
    }
    const counters = parts[2] === undefined ? undefined : parseCounters(parts[2]);
    if (parts[2] !== undefined && !counters) fail(lineNo, 'bad chain counters', text);
    return { kind: 'chain', name: parts[0]!, policy: parts[1]!, ...(counters ? { counters } : {}) };
  }
  const op = /^(-X|-F|-N|-Z)(?: (\S+))?$/.exec(text);
  if (op) {
    if (op[1] === '-N' && !op[2]) fail(lineNo, '-N needs a chain', text);
    return { kind: 'chain-op', op: op[1] as '-X' | '-F' | '-N' | '-Z',
      ...(op[2] ? { chain: op[2] } : {}) };
  }
  if (text.startsWith('-') || text.startsWith('[')) return parseRule(text, lineNo);
  return fail(lineNo, 'unrecognised line', text);
}

/** Parses the text; throws KDP_PARSE (line number + reason) on the first bad line. */
export function parse(text: string): IptablesDocument {
  const trailingNewline = text.endsWith('\n');
  const raw = (trailingNewline ? text.slice(0, -1) : text);
  const lines: IptablesLine[] = [];
  if (raw === '' && !trailingNewline) return { lines, trailingNewline };
  let tableLine = 0;
  const rows = raw.split('\n');
  rows.forEach((t, i) => {
    const l = parseLine(t, i + 1, tableLine > 0);
    if (l.kind === 'table') tableLine = i + 1;
    if (l.kind === 'commit') tableLine = 0;
    lines.push(l);
  });
  if (tableLine > 0) fail(tableLine, 'table has no COMMIT', rows[tableLine - 1]!);
  return { lines, trailingNewline };
}

/** The structured view: tables → chains (declared or used) → rules (`-A` only, in order). */
export function tablesOf(doc: IptablesDocument): IptablesTable[] {
  const tables: IptablesTable[] = [];
  let t: IptablesTable | undefined;
  // By name, so big tables (10k+ chains) stay linear.
  let byName = new Map<string, IptablesChain>();
  const chain = (name: string): IptablesChain => {
    let c = byName.get(name);
    if (!c) {
      c = { name, policy: '', rules: [], deleted: false };
      t!.chains.push(c);
      byName.set(name, c);
    }
    return c;
  };
  for (const l of doc.lines) {
    if (l.kind === 'table') { t = { name: l.name, chains: [] }; tables.push(t); byName = new Map(); }
    else if (l.kind === 'chain') {
      const c = chain(l.name);
      c.policy = l.policy;
      if (l.counters) c.counters = l.counters;
    } else if (l.kind === 'rule' && l.op === '-A') {
      const text = `-A ${l.chain}${l.raw !== undefined ? (l.raw ? ` ${l.raw}` : '')
        : l.args.length ? ` ${formatArgs(l.args)}` : ''}`;
      const counters = l.counters ? { counters: l.counters } : {};
      chain(l.chain).rules.push({ args: l.args, text, ...counters });
    } else if (l.kind === 'chain-op' && l.op === '-X' && l.chain) {
      chain(l.chain).deleted = true;
    }
  }
  return tables;
}
