// Label selectors (apimachinery pkg/labels) in both forms, the string a client sends
// (`a=b,c!=d,e in (x,y),!f,g`) and the LabelSelector object stored in specs, compiled to one
// matcher. Garbage is rejected with KDP_BAD_REQUEST naming what was wrong, as upstream's parser
// does. Field selectors live in field-selectors.ts.

import { kdpError } from '../errors.js';
import type { LabelSelector } from './types.js';
import { isQualifiedName, isValidLabelValue } from './validation/names.js';

export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted values; one for `=`, `==`, `!=`, `gt`, `lt`; none for `exists` and `!`. */
  readonly values: readonly string[];
}

/** A compiled label selector. `requirements` is sorted by key, as upstream keeps it. */
export interface LabelMatcher {
  readonly requirements: readonly LabelRequirement[];
  /** Matches everything (no requirements). */
  readonly empty: boolean;
  /** Matches nothing (a `null` LabelSelector). */
  readonly nothing: boolean;
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** Canonical string form (upstream Selector.String()). */
  toString(): string;
}

function reqMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels[r.key]! : undefined;
  switch (r.operator) {
    case '=': case '==': case 'in': return v !== undefined && r.values.includes(v);
    case '!=': case 'notin': return v === undefined || !r.values.includes(v);
    case 'exists': return has;
    case '!': return !has;
    case 'gt': case 'lt': {
      if (v === undefined || !/^-?\d+$/.test(v)) return false;
      const n = Number(v);
      const bound = Number(r.values[0]);
      return r.operator === 'gt' ? n > bound : n < bound;
    }
  }
}

function reqString(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists': return r.key;
    case '!': return `!${r.key}`;
    case 'in': case 'notin': return `${r.key} ${r.operator} (${r.values.join(',')})`;
    case 'gt': return `${r.key}>${r.values[0]}`;
    case 'lt': return `${r.key}<${r.values[0]}`;
    default: return `${r.key}${r.operator}${r.values[0]}`;
  }
}

/** Builds a matcher from requirements (validated by the caller). */
export function buildLabelMatcher(reqs: readonly LabelRequirement[],
  nothing = false): LabelMatcher {
  const sorted = [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    requirements: sorted,
    empty: !nothing && sorted.length === 0,
    nothing,
    matches: (labels) => !nothing && sorted.every((r) => reqMatches(r, labels ?? {})),
    toString: () => sorted.map(reqString).join(','),
  };
}

function bad(msg: string): never {
  throw kdpError('KDP_BAD_REQUEST', msg);
}

/** Checks key and values as upstream NewRequirement does; throws KDP_BAD_REQUEST. */
export function newRequirement(key: string, op: LabelOperator, values: string[]): LabelRequirement {
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length > 0) bad(`invalid label key "${key}": ${keyErrs.join('; ')}`);
  if ((op === 'in' || op === 'notin') && values.length === 0) {
    bad(`for 'in', 'notin' operators, values set can't be empty`);
  }
  if ((op === '=' || op === '==' || op === '!=') && values.length !== 1) {
    bad(`exact-match compatibility requires one single value`);
  }
  if ((op === 'exists' || op === '!') && values.length !== 0) {
    bad(`values set must be empty for exists and does not exist`);
  }
  if (op === 'gt' || op === 'lt') {
    if (values.length !== 1 || !/^-?\d+$/.test(values[0]!)) {
      bad(`for 'Gt', 'Lt' operators, the value must be an integer`);
    }
  } else {
    for (const v of values) {
      const errs = isValidLabelValue(v);
      if (errs.length > 0) bad(`invalid label value: "${v}": at key: "${key}": ${errs.join('; ')}`);
    }
  }
  return { key, operator: op, values: [...new Set(values)].sort() };
}

// --- string form --------------------------------------------------------------------------

type Tok = { t: 'id' | 'op' | ',' | '(' | ')' | 'end'; v: string };

const SPECIAL = new Set(['=', '!', '(', ')', ',', '<', '>', ' ', '\t', '\n']);

function lex(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t' || c === '\n') { i++; continue; }
    if (c === ',' || c === '(' || c === ')') { out.push({ t: c, v: c }); i++; continue; }
    const two = s.slice(i, i + 2);
    if (two === '==' || two === '!=') { out.push({ t: 'op', v: two }); i += 2; continue; }
    if (c === '=' || c === '!' || c === '<' || c === '>') {
      out.push({ t: 'op', v: c }); i++; continue;
    }
    let j = i;
    while (j < s.length && !SPECIAL.has(s[j]!)) j++;
    out.push({ t: 'id', v: s.slice(i, j) });
    i = j;
  }
  out.push({ t: 'end', v: '' });
  return out;
}

class LabelParser {
  private pos = 0;
  constructor(private readonly toks: Tok[], private readonly src: string) {}

  private peek(): Tok { return this.toks[this.pos]!; }
  private next(): Tok { return this.toks[this.pos++]!; }
  private fail(found: Tok, expected: string): never {
    const what = found.t === 'end' ? 'end of string' : `'${found.v}'`;
    return bad(`unable to parse requirement: found ${what}, expected: ${expected}`
      + ` (in label selector "${this.src}")`);
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    if (this.peek().t === 'end') return reqs;
    for (;;) {
      reqs.push(this.requirement());
      const t = this.next();
      if (t.t === 'end') return reqs;
      if (t.t !== ',') this.fail(t, "',' or 'end of string'");
      if (this.peek().t === 'end') this.fail(this.peek(), 'identifier');
    }
  }

  private requirement(): LabelRequirement {
    let t = this.next();
    if (t.t === 'op' && t.v === '!') {
      t = this.next();
      if (t.t !== 'id') this.fail(t, "identifier after '!'");
      return newRequirement(t.v, '!', []);
    }
    if (t.t !== 'id') this.fail(t, 'identifier');
    const key = t.v;
    const opTok = this.peek();
    if (opTok.t === ',' || opTok.t === 'end') return newRequirement(key, 'exists', []);
    this.next();
    const op = this.operator(opTok);
    if (op === 'in' || op === 'notin') return newRequirement(key, op, this.valueSet());
    const v = this.peek();
    if (v.t === 'id') { this.next(); return newRequirement(key, op, [v.v]); }
    if (v.t === ',' || v.t === 'end') return newRequirement(key, op, ['']);
    return this.fail(v, 'identifier');
  }

  private operator(t: Tok): LabelOperator {
    if (t.t === 'op') {
      if (t.v === '=' || t.v === '==' || t.v === '!=') return t.v;
      if (t.v === '>') return 'gt';
      if (t.v === '<') return 'lt';
    }
    if (t.t === 'id' && (t.v === 'in' || t.v === 'notin')) return t.v;
    return this.fail(t, "'=', '!=', '==', 'in', 'notin', '>' or '<'");
  }

  private valueSet(): string[] {
    const open = this.next();
    if (open.t !== '(') this.fail(open, "'('");
    const vals: string[] = [];
    for (;;) {
      const t = this.next();
      if (t.t === 'id') {
        vals.push(t.v);
        const sep = this.next();
        if (sep.t === ')') return vals;
        if (sep.t !== ',') this.fail(sep, "',' or ')'");
      } else if (t.t === ',') {
        vals.push('');
      } else if (t.t === ')') {
        if (vals.length > 0) vals.push('');
        return vals;
      } else {
        this.fail(t, "',', ')' or identifier");
      }
    }
  }
}

/** Parses the string form; `''` matches everything. Throws KDP_BAD_REQUEST on garbage. */
export function parseLabelSelector(s: string): LabelMatcher {
  return buildLabelMatcher(new LabelParser(lex(s), s).parse());
}

// --- object form --------------------------------------------------------------------------

const OPS: Record<string, LabelOperator> = {
  In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!',
};

/**
 * metav1.LabelSelectorAsSelector: `null`/`undefined` matches nothing, `{}` everything.
 * Throws KDP_BAD_REQUEST for an invalid operator, key or value.
 */
export function labelSelectorMatcher(sel: LabelSelector | null | undefined): LabelMatcher {
  if (sel === null || sel === undefined) return buildLabelMatcher([], true);
  const reqs: LabelRequirement[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) reqs.push(newRequirement(k, '=',
    [v]));
  for (const e of sel.matchExpressions ?? []) {
    const op = OPS[e.operator];
    if (!op) bad(`"${e.operator}" is not a valid label selector operator`);
    reqs.push(newRequirement(e.key, op, [...(e.values ?? [])]));
  }
  return buildLabelMatcher(reqs);
}

/** Whether `labels` match a LabelSelector object (null matches nothing). */
export function matchesLabelSelector(
  sel: LabelSelector | null | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  return labelSelectorMatcher(sel).matches(labels);
}

/** Whether `labels` match a Service-style `selector` map (empty/absent matches nothing). */
export function matchesSelectorMap(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const entries = Object.entries(selector ?? {});
  if (entries.length === 0) return false;
  return entries.every(([k, v]) => labels?.[k] === v);
}

/** String form of a LabelSelector object (Scale `status.selector`, kubectl wide output). */
export function formatLabelSelector(sel: LabelSelector | null | undefined): string {
  return labelSelectorMatcher(sel).toString();
}
