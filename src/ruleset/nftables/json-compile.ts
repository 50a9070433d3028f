// Rule words → `nft -j` statements, for rules that were not read from JSON (a table compiled
// by kdp, or read from `nft list` text). Covers the vocabulary kube-proxy writes and the
// kernel's listing of it; an unknown word throws UnsupportedExpr naming it.

import { UnsupportedExpr } from './json-expr.js';

type J = unknown;

const PAYLOAD_PROTOS = new Set(['ip', 'ip6', 'th', 'tcp', 'udp', 'sctp', 'ether']);
const BARE_META = new Set(['iif', 'iifname', 'oif', 'oifname', 'mark']);
const VERDICTS = new Set(['drop', 'accept', 'return', 'continue']);
const OPS = new Set(['==', '!=', '<', '>', '<=', '>=']);
const BINOPS: Record<string, string> = { and: '&', or: '|', xor: '^', '&': '&', '|': '|',
  '^': '^' };

class Words {
  i = 0;
  constructor(readonly w: readonly string[]) {}
  peek(o = 0): string | undefined { return this.w[this.i + o]; }
  next(): string {
    const v = this.w[this.i++];
    if (v === undefined) throw new UnsupportedExpr('rule ends too early');
    return v;
  }
  done(): boolean { return this.i >= this.w.length; }
}

function value(word: string): J {
  if (/^\d+$/.test(word)) return Number(word);
  if (/^0x[0-9a-f]+$/i.test(word)) return Number(word);
  if (word.startsWith('"') && word.endsWith('"')) return word.slice(1, -1);
  const m = /^([0-9a-f.:]+)\/(\d+)$/i.exec(word);
  if (m) return { prefix: { addr: m[1], len: Number(m[2]) } };
  return word;
}

/** One selector (`ip daddr`, `meta l4proto`, `ct state`, `fib daddr type`, `numgen …`). */
function selector(w: Words): J | undefined {
  const a = w.peek();
  if (a === undefined) return undefined;
  if (PAYLOAD_PROTOS.has(a) && /^(saddr|daddr|sport|dport)$/.test(w.peek(1) ?? '')) {
    w.i += 2;
    return { payload: { protocol: a, field: w.w[w.i - 1] } };
  }
  if (a === 'meta') { w.i += 2; return { meta: { key: w.w[w.i - 1] } }; }
  if (BARE_META.has(a)) { w.i += 1; return { meta: { key: a } }; }
  if (a === 'ct') { w.i += 2; return { ct: { key: w.w[w.i - 1] } }; }
  if (a === 'fib') {
    w.i += 1;
    const flags = w.next().split('.');
    return { fib: { result: w.next(), flags } };
  }
  if (a === 'numgen') {
    w.i += 1;
    const mode = w.next();
    if (w.next() !== 'mod') throw new UnsupportedExpr('numgen without mod');
    return { numgen: { mode, mod: Number(w.next()), offset: 0 } };
  }
  return undefined;
}

function concatOrOne(w: Words, first: J): J {
  const parts = [first];
  while (w.peek() === '.') {
    w.i++;
    parts.push(selector(w) ?? value(w.next()));
  }
  return parts.length === 1 ? first : { concat: parts };
}

/** `{ a , b }` / `{ a, b }` / `{ 0 : goto x , 1 : goto y }` starting at `{`. */
function braced(w: Words): J[] {
  w.next();
  const items: J[] = [];
  let cur: string[] = [];
  const flush = () => {
    if (cur.length === 0) return;
    const colon = cur.indexOf(':');
    if (colon < 0) items.push(value(cur.join(' ')));
    else items.push([value(cur.slice(0, colon).join(' ')), verdict(cur.slice(colon + 1))]);
    cur = [];
  };
  for (;;) {
    const t = w.next();
    if (t === '}') break;
    if (t === ',') { flush(); continue; }
    if (t.endsWith(',')) { cur.push(t.slice(0, -1)); flush(); continue; }
    cur.push(t);
  }
  flush();
  return items;
}

function verdict(words: readonly string[]): J {
  const [v, target] = words;
  if ((v === 'goto' || v === 'jump') && target) return { [v]: { target } };
  if (v && VERDICTS.has(v)) return { [v]: null };
  throw new UnsupportedExpr(`verdict "${words.join(' ')}"`);
}

function rightSide(w: Words): J {
  if (w.peek() === '{') return { set: braced(w) };
  return value(w.next());
}

function statement(w: Words): J {
  const t = w.next();
  if (t === 'jump' || t === 'goto') return { [t]: { target: w.next() } };
  if (VERDICTS.has(t)) return { [t]: null };
  if (t === 'reject') return { reject: null };
  if (t === 'counter') {
    if (w.peek() === 'packets') {
      w.i++;
      const packets = Number(w.next());
      w.next();
      return { counter: { packets, bytes: Number(w.next()) } };
    }
    return { counter: null };
  }
  if (t === 'masquerade') {
    const f = w.peek();
    if (f === 'fully-random' || f === 'random' || f === 'persistent') {
      w.i++;
      return { masquerade: { flags: f } };
    }
    return { masquerade: null };
  }
  if (t === 'dnat' || t === 'snat') {
    if (w.next() !== 'to') throw new UnsupportedExpr(`${t} without "to"`);
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(w.next());
    if (!m) throw new UnsupportedExpr(`${t} target`);
    return { [t]: { addr: m[1], port: Number(m[2]) } };
  }
  if (t === 'update' || t === 'add') {
    const set = w.next();
    w.next();
    const sel = selector(w) ?? value(w.next());
    w.next();
    return { set: { op: t, elem: sel, set } };
  }
  throw new UnsupportedExpr(`word "${t}"`);
}

/** The JSON statements of one rule's words. */
export function compileRuleWords(words: readonly string[]): J[] {
  const w = new Words(words);
  const out: J[] = [];
  while (!w.done()) {
    const sel = selector(w);
    if (sel === undefined) { out.push(statement(w)); continue; }
    const key = concatOrOne(w, sel);
    const op = w.peek();
    if (op === 'vmap') {
      w.i++;
      const data = w.peek() === '{' ? { set: braced(w) } : w.next();
      out.push({ vmap: { key, data } });
    } else if (op === 'set') {
      w.i++;
      const base = selector(w) ?? value(w.next());
      const bin = BINOPS[w.peek() ?? ''];
      const val = bin ? (w.i++, { [bin]: [base, value(w.next())] }) : base;
      out.push({ mangle: { key, value: val } });
    } else if (op !== undefined && BINOPS[op] && op !== 'or') {
      w.i++;
      const left = { [BINOPS[op]!]: [key, value(w.next())] };
      const cmp = OPS.has(w.peek() ?? '') ? w.next() : '==';
      out.push({ match: { op: cmp, left, right: rightSide(w) } });
    } else if (op !== undefined && OPS.has(op)) {
      w.i++;
      out.push({ match: { op, left: key, right: rightSide(w) } });
    } else {
      const isCtState = (key as { ct?: { key?: string } }).ct?.key === 'state';
      out.push({ match: { op: isCtState ? 'in' : '==', left: key, right: rightSide(w) } });
    }
  }
  return out;
}
