// `nft -j list ruleset` JSON ↔ the model. Rules keep their JSON statements (`expr`) next to
// the rendered words, so JSON formatted from a JSON-parsed model is the input again; tables,
// sets, maps and chains are written back with nft's key order and separators.

import { kdpError } from '../../errors.js';
import { elementKey, isFamily, newTable, tableKey, type NftChain, type NftElement,
  type NftRule, type NftRuleset, type NftSet, type NftTable } from './model.js';
import { parseDuration } from './duration.js';
import { compileRuleWords } from './json-compile.js';
import { renderExpr, renderStatement, renderVerdict, UnsupportedExpr } from './json-expr.js';

type Obj = Record<string, unknown>;

/** A rule parsed from JSON remembers its statements. */
export interface NftJsonRule extends NftRule {
  readonly expr?: readonly unknown[];
}

export interface ParsedJson {
  readonly ruleset: NftRuleset;
  readonly metainfo?: Obj;
}

function parseFail(index: number, reason: string): never {
  throw kdpError('KDP_PARSE', `nft JSON object ${index}: ${reason}`, {
    causes: [{ field: `nftables[${index}]`, reason: 'ParseError', message: reason }],
  });
}

export function parseListJson(text: string): ParsedJson {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw kdpError('KDP_PARSE', `nft JSON: ${(e as Error).message}`, {
      causes: [{ field: 'json', reason: 'ParseError', message: (e as Error).message }],
    });
  }
  const items = (doc as { nftables?: unknown }).nftables;
  if (!Array.isArray(items)) parseFail(0, 'missing "nftables" array');
  const rs: NftRuleset = { tables: new Map() };
  let metainfo: Obj | undefined;
  const tableOf = (i: number, o: Obj): NftTable =>
    rs.tables.get(tableKey(String(o.family), String(o.table))) ?? parseFail(i, 'unknown table');
  items.forEach((item: unknown, i: number) => {
    const [kind, body] = Object.entries(item as Obj)[0] ?? parseFail(i, 'empty object');
    const o = body as Obj;
    switch (kind) {
      case 'metainfo': metainfo = o; break;
      case 'table': {
        if (!isFamily(String(o.family))) parseFail(i, `unknown family ${o.family}`);
        const t = newTable(o.family as NftTable['family'], String(o.name));
        if (typeof o.handle === 'number') t.handle = o.handle;
        if (typeof o.comment === 'string') t.comment = o.comment;
        if (Array.isArray(o.flags)) t.flags = o.flags as string[];
        rs.tables.set(tableKey(t.family, t.name), t);
        break;
      }
      case 'set': case 'map': tableOf(i, o).sets.set(String(o.name), jsonSet(i, kind, o)); break;
      case 'chain': tableOf(i, o).chains.set(String(o.name), jsonChain(o)); break;
      case 'rule': {
        const chain = tableOf(i, o).chains.get(String(o.chain)) ?? parseFail(i, 'unknown chain');
        chain.rules.push(jsonRule(i, o));
        break;
      }
      default: parseFail(i, `unsupported object "${kind}"`);
    }
  });
  return metainfo ? { ruleset: rs, metainfo } : { ruleset: rs };
}

function typeText(t: unknown): string {
  return Array.isArray(t) ? t.join(' . ') : String(t);
}

function jsonSet(i: number, kind: 'set' | 'map', o: Obj): NftSet {
  const type = typeText(o.type) + (kind === 'map' ? ` : ${typeText(o.map)}` : '');
  const flags = Array.isArray(o.flags) ? o.flags as string[] : o.flags ? [String(o.flags)] : [];
  const s: { -readonly [K in keyof NftSet]: NftSet[K] } = { kind, name: String(o.name), type,
    flags, elements: new Map() };
  if (typeof o.handle === 'number') s.handle = o.handle;
  if (typeof o.size === 'number') s.size = o.size;
  if (typeof o.timeout === 'number') s.timeout = o.timeout;
  if (typeof o['gc-interval'] === 'number') s.gcInterval = o['gc-interval'] as number;
  if (typeof o.policy === 'string') s.policy = o.policy;
  if (typeof o.comment === 'string') s.comment = o.comment;
  for (const e of Array.isArray(o.elem) ? o.elem : []) {
    const el = jsonElement(i, kind, e);
    s.elements.set(elementKey(el.key), el);
  }
  return s;
}

function jsonElement(i: number, kind: 'set' | 'map', e: unknown): NftElement {
  try {
    let keyExpr = kind === 'map' ? (e as unknown[])[0] : e;
    const el: { -readonly [K in keyof NftElement]: NftElement[K] } = { key: [] };
    const wrapped = (keyExpr as Obj | null)?.elem as Obj | undefined;
    if (wrapped && typeof wrapped === 'object') {
      keyExpr = wrapped.val;
      if (typeof wrapped.comment === 'string') el.comment = wrapped.comment;
      if (wrapped.timeout !== undefined) el.timeout = `${wrapped.timeout}s`;
      if (wrapped.expires !== undefined) el.expires = `${wrapped.expires}s`;
    }
    const concat = (keyExpr as Obj | null)?.concat;
    el.key = Array.isArray(concat) ? concat.map((x) => renderExpr(x)) : [renderExpr(keyExpr)];
    if (kind === 'map') {
      const v = (e as unknown[])[1];
      el.value = [renderVerdict(v) ?? renderExpr(v)];
    }
    return el;
  } catch (err) {
    if (err instanceof UnsupportedExpr) parseFail(i, `element: ${err.message}`);
    throw err;
  }
}

function jsonChain(o: Obj): NftChain {
  const c: { -readonly [K in keyof NftChain]: NftChain[K] } = { name: String(o.name), rules: [] };
  if (typeof o.handle === 'number') c.handle = o.handle;
  if (typeof o.comment === 'string') c.comment = o.comment;
  if (typeof o.type === 'string') c.type = o.type;
  if (typeof o.hook === 'string') c.hook = o.hook;
  if (typeof o.prio === 'number') c.priority = o.prio;
  if (typeof o.policy === 'string') c.policy = o.policy;
  if (typeof o.dev === 'string') c.device = o.dev;
  return c;
}

function jsonRule(i: number, o: Obj): NftJsonRule {
  const expr = Array.isArray(o.expr) ? o.expr : [];
  let words: string;
  try {
    words = expr.map(renderStatement).join(' ');
  } catch (err) {
    if (err instanceof UnsupportedExpr) parseFail(i, `rule in chain ${o.chain}: ${err.message}`);
    throw err;
  }
  const r: { -readonly [K in keyof NftJsonRule]: NftJsonRule[K] } = {
    tokens: words.split(' ').filter(Boolean), expr,
  };
  if (typeof o.comment === 'string') r.comment = o.comment;
  if (typeof o.handle === 'number') r.handle = o.handle;
  return r;
}

/** JSON text as nft prints it (`, ` and `: ` separators, one line). */
export function stringifyNft(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stringifyNft).join(', ')}]`;
  return `{${Object.entries(v).filter(([, x]) => x !== undefined)
    .map(([k, x]) => `${JSON.stringify(k)}: ${stringifyNft(x)}`).join(', ')}}`;
}

function seconds(d: string | undefined): number | undefined {
  return d === undefined ? undefined : parseDuration(d);
}

function elementJson(s: NftSet, e: NftElement): unknown {
  const part = (p: string): unknown => (/^\d+$/.test(p) ? Number(p) : p);
  let key: unknown = e.key.length > 1 ? { concat: e.key.map(part) } : part(e.key[0]!);
  if (e.comment !== undefined || e.timeout !== undefined || e.expires !== undefined) {
    key = { elem: { val: key, timeout: seconds(e.timeout), expires: seconds(e.expires),
      comment: e.comment } };
  }
  if (s.kind === 'set') return key;
  const v = e.value?.[0] ?? '';
  const m = /^(jump|goto) (\S+)$/.exec(v);
  return [key, m ? { [m[1]!]: { target: m[2] } } : /^(accept|drop|return|continue)$/.test(v)
    ? { [v]: null } : part(v)];
}

function setJson(t: NftTable, s: NftSet): unknown {
  const [keyType, valueType] = s.type.split(' : ');
  const typeOut = (x: string): unknown => (x.includes(' . ') ? x.split(' . ') : x);
  const body: Obj = { family: t.family, name: s.name, table: t.name, type: typeOut(keyType!),
    handle: s.handle };
  if (s.size !== undefined) body.size = s.size;
  // nftables 1.0.x JSON neither prints nor accepts the `dynamic` flag.
  const flags = s.flags.filter((f) => f !== 'dynamic');
  if (flags.length > 0) body.flags = flags;
  if (s.timeout !== undefined) body.timeout = s.timeout;
  if (s.gcInterval !== undefined) body['gc-interval'] = s.gcInterval;
  if (s.policy !== undefined) body.policy = s.policy;
  if (s.comment !== undefined) body.comment = s.comment;
  if (s.kind === 'map') body.map = typeOut(valueType ?? '');
  if (s.elements.size > 0) body.elem = [...s.elements.values()].map((e) => elementJson(s, e));
  return { [s.kind]: body };
}

function chainJson(t: NftTable, c: NftChain): unknown {
  const body: Obj = { family: t.family, table: t.name, name: c.name, handle: c.handle };
  if (c.comment !== undefined) body.comment = c.comment;
  if (c.type !== undefined) {
    Object.assign(body, { type: c.type, hook: c.hook, prio: c.priority });
    if (c.device !== undefined) body.dev = c.device;
    body.policy = c.policy ?? 'accept';
  }
  return { chain: body };
}

function compileWords(chain: string, r: NftRule): unknown[] {
  try {
    return compileRuleWords(r.tokens);
  } catch (err) {
    if (!(err instanceof UnsupportedExpr)) throw err;
    throw kdpError('KDP_PARSE', `nft JSON: rule "${r.tokens.join(' ')}" in chain ${chain}: `
      + err.message);
  }
}

/**
 * JSON as `nft -j list ruleset` prints it. Rules read from JSON keep their statements; other
 * rules are compiled from their words (kube-proxy's vocabulary; anything else is KDP_PARSE).
 */
export function formatListJson(rs: NftRuleset, metainfo?: Obj): string {
  const items: unknown[] = [];
  if (metainfo) items.push({ metainfo });
  for (const t of rs.tables.values()) {
    const body: Obj = { family: t.family, name: t.name, handle: t.handle };
    if (t.comment !== undefined) body.comment = t.comment;
    if (t.flags?.length) body.flags = t.flags;
    items.push({ table: body });
    for (const s of t.sets.values()) items.push(setJson(t, s));
    for (const c of t.chains.values()) items.push(chainJson(t, c));
    for (const c of t.chains.values()) {
      for (const r of c.rules as NftJsonRule[]) {
        const rb: Obj = { family: t.family, table: t.name, chain: c.name, handle: r.handle };
        if (r.comment !== undefined) rb.comment = r.comment;
        rb.expr = r.expr ?? compileWords(c.name, r);
        items.push({ rule: rb });
      }
    }
  }
  return stringifyNft({ nftables: items }) + '\n';
}
