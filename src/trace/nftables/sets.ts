// Matches and verdict maps compiled into closures over the world, on first use: literals and
// anonymous sets parsed once, named sets indexed by exact key (one Map level per key part, so a
// lookup builds no key string), map verdicts parsed into the index as verdict codes.

import { canonicalIP } from '../../api/net.js';
import type { World } from '../world.js';
import {
  compilePart, exprNames, PROTO_NUM, type Expr, type FieldEnv, type Part, type Stmt, type ValueRef,
  type Verdict,
} from './compile.js';
import type { NftHookEnv, NftTableIR } from './interpreter.js';
import {
  codeKind, codeTarget, encodeVerdict, endpointShape, VKind, type EndpointShape,
} from './program.js';

type Element = { readonly key: readonly string[]; readonly value?: readonly string[] };

export type Test = (w: World, env: NftHookEnv) => boolean;
type PartTest = (actual: Part, w: World) => boolean;

/** A verdict map: `lookup` gives the verdict's code (program.ts verdictCode), -1 for none. */
export type CompiledVmap =
  | { readonly kind: 'keyed'; lookup(w: World, env: NftHookEnv): number }
  | NumgenVmap;

/** `numgen random mod N vmap {...}`: the branches in element order, each taken with
 *  probability `p`; `missing` is what no element covers. */
export interface NumgenVmap {
  readonly kind: 'numgen';
  /** Per branch: the verdict's code. */
  readonly codes: Int32Array;
  readonly p: number;
  readonly missing: number;
  /** Branches that goto an endpoint chain (program.ts endpointShape), when every one does. */
  readonly endpoints: Endpoints | undefined;
}

/** The endpoint chains of a numgen map's branches, field by field (made together: a big table
 *  reads a service's endpoints from a few cache lines). */
export interface Endpoints {
  readonly saddrOwn: Uint8Array;
  readonly saddr: readonly (string | undefined)[];
  readonly proto: readonly (string | undefined)[];
  readonly dnat: readonly string[];
  readonly port: Int32Array;
  /** Written by the interpreter's touch() (so the reads it makes are kept). */
  touched: number;
}

/**
 * A named set's exact elements: a Map per key part, keyed by the part as the packet yields it
 * (ports as numbers, everything else as text). Leaves are what `leaf` made of the element.
 */
export interface SetIndex<L> {
  readonly exact: Map<unknown, unknown>;
  /** Per part: keyed by number (a port) rather than text. */
  readonly numeric: readonly boolean[];
  /** Elements with ranges or prefixes: matched one by one. */
  readonly rest: readonly Element[];
}

/** The getters of an expression's parts, flattened (numgen yields nothing to match on). */
function partGetters(e: Expr): ((w: World, env: FieldEnv) => Part)[] {
  if (e.kind === 'concat') return e.parts.flatMap(partGetters);
  if (e.kind === 'numgen') return [() => undefined];
  return [e.get];
}

function evalParts(
  getters: readonly ((w: World, env: FieldEnv) => Part)[], w: World, env: FieldEnv,
): Part[] {
  const parts: Part[] = new Array(getters.length);
  for (let i = 0; i < getters.length; i++) parts[i] = getters[i]!(w, env);
  return parts;
}

function elementsOf(t: NftTableIR, v: ValueRef): readonly Element[] {
  if (v.kind === 'named') return t.setElements(v.name);
  if (v.kind === 'anon') return v.elements;
  return [{ key: v.parts }];
}

/** An element's key against the packet's parts (same length, every part matching). */
function keyTest(
  key: readonly string[], names: readonly string[],
): (parts: readonly Part[], w: World) => boolean {
  // Parts always number as many as the names: a key of another length never matches.
  if (key.length !== names.length) return () => false;
  const tests: PartTest[] = key.map((k, i) => compilePart(k, names[i]!));
  const n = key.length;
  return (parts, w) => {
    if (parts.length !== n) return false;
    for (let i = 0; i < n; i++) if (!tests[i]!(parts[i], w)) return false;
    return true;
  };
}

function linear(
  els: readonly Element[], names: readonly string[],
): (parts: readonly Part[], w: World) => Element | undefined {
  const tests = els.map((e) => keyTest(e.key, names));
  return (parts, w) => {
    for (let i = 0; i < els.length; i++) if (tests[i]!(parts, w)) return els[i];
    return undefined;
  };
}

/** The exact index's leaf for the parts, or undefined. */
function exactLeaf(idx: SetIndex<unknown>, parts: readonly Part[]): unknown {
  let m: unknown = idx.exact;
  for (let i = 0; i < parts.length; i++) {
    m = (m as Map<unknown, unknown>).get(indexKey(idx.numeric[i]!, parts[i]));
    if (m === undefined) return undefined;
  }
  return m;
}

/** A part as the index keys it: text, or for a port the number whose text is the element's
 *  `String(Number(p))`. */
function indexKey(numeric: boolean, p: Part): unknown {
  if (!numeric) return typeof p === 'string' ? p : String(p);
  if (typeof p === 'number') return p;
  const n = Number(p);
  return String(n) === String(p) ? n : NaN;
}

/** The first element of `v` whose key matches the parts: by index for named sets (exact keys),
 *  else one by one. Compiled once per statement. */
function elementFinder(
  t: NftTableIR, v: ValueRef, names: readonly string[],
): (parts: readonly Part[], w: World) => Element | undefined {
  if (!indexed(v, names)) return linear(elementsOf(t, v), names);
  const idx = setIndex(t, v.name, names, 'el', (e) => e);
  const rest = linear(idx.rest, names);
  return (parts, w) => (exactLeaf(idx, parts) as Element | undefined) ?? rest(parts, w);
}

/** Named sets are looked up by index (ct state parts are no exact keys). */
function indexed(v: ValueRef, names: readonly string[]): v is Extract<ValueRef, { kind: 'named' }> {
  return v.kind === 'named' && !names.includes('ct state');
}

/** One part against a named set (`ip daddr @cluster-ips`): hit or not. */
function oneIndexed(
  t: NftTableIR, name: string, names: readonly string[],
): (v: Part, w: World) => boolean {
  const idx = setIndex(t, name, names, 'el', (e) => e);
  const exact = idx.exact;
  const numeric = idx.numeric[0]!;
  if (idx.rest.length === 0) return (v) => exact.get(indexKey(numeric, v)) !== undefined;
  const rest = linear(idx.rest, names);
  const one: Part[] = [undefined];
  return (v, w) => {
    if (exact.get(indexKey(numeric, v)) !== undefined) return true;
    one[0] = v;
    return rest(one, w) !== undefined;
  };
}

export function compileMatch(t: NftTableIR, st: Extract<Stmt, { kind: 'match' }>): Test {
  const names = exprNames(st.expr);
  const getters = partGetters(st.expr);
  const negate = st.negate;
  if (st.mask !== undefined) {
    const mask = st.mask;
    const wanted = elementsOf(t, st.value).map((e) => Number(e.key[0]));
    const first = getters[0]!;
    return (w, env) => {
      const v = ((Number(first(w, env) ?? 0) & mask) >>> 0);
      const hit = wanted.includes(v);
      return negate ? !hit : hit;
    };
  }
  // A payload of another protocol/family never matches, negated or not (as in the kernel).
  const payload = names.map((n) => n !== 'ct state');
  if (getters.length === 1 && indexed(st.value, names)) {
    const get = getters[0]!;
    const has = oneIndexed(t, st.value.name, names);
    return (w, env) => {
      const v = get(w, env);
      if (v === undefined) return false;
      const hit = has(v, w);
      return negate ? !hit : hit;
    };
  }
  if (getters.length === 1) {
    // One part: an element matches when its one key part does (a longer key never matches).
    const get = getters[0]!;
    const isPayload = payload[0]!;
    const tests = elementsOf(t, st.value).filter((e) => e.key.length === 1)
      .map((e) => compilePart(e.key[0]!, names[0]!));
    return (w, env) => {
      const v = get(w, env);
      if (v === undefined && isPayload) return false;
      let hit = false;
      for (let i = 0; i < tests.length && !hit; i++) hit = tests[i]!(v, w);
      return negate ? !hit : hit;
    };
  }
  const find = elementFinder(t, st.value, names);
  return (w, env) => {
    const parts = evalParts(getters, w, env);
    for (let i = 0; i < parts.length; i++) if (parts[i] === undefined && payload[i]) return false;
    const hit = find(parts, w) !== undefined;
    return negate ? !hit : hit;
  };
}

export function compileVmap(t: NftTableIR, st: Extract<Stmt, { kind: 'vmap' }>): CompiledVmap {
  const e = st.expr;
  const code = (v: Verdict | undefined) => (v === undefined ? -1 : encodeVerdict(v, t.starts));
  if (e.kind === 'numgen') {
    const verdicts: Verdict[] = [];
    for (const el of elementsOf(t, st.map)) {
      const k = Number(el.key[0]) - e.offset;
      const v = elementVerdict(t, el.value);
      if (v && k >= 0 && k < e.mod) verdicts.push(v);
    }
    const p = 1 / e.mod;
    let covered = 0;
    for (let i = 0; i < verdicts.length; i++) covered += p;
    const codes = Int32Array.from(verdicts, code);
    return { kind: 'numgen', codes, p, missing: 1 - covered, endpoints: endpointsOf(t, codes) };
  }
  // An empty map (kube-proxy keeps several, e.g. no-endpoint-services) has no verdict for any
  // packet; reading the packet has no effects, so there is nothing to evaluate.
  if (elementsOf(t, st.map).length === 0) return { kind: 'keyed', lookup: () => -1 };
  const names = exprNames(e);
  const getters = partGetters(e);
  if (!indexed(st.map, names)) {
    const find = linear(elementsOf(t, st.map), names);
    return {
      kind: 'keyed',
      lookup(w, env) {
        const parts = evalParts(getters, w, env);
        if (parts.includes(undefined)) return -1;
        return code(elementVerdict(t, find(parts, w)?.value));
      },
    };
  }
  // Leaves hold the element's verdict code (-1 for an element without one: no fallback then).
  const idx = setIndex(t, st.map.name, names, 'verdict', (el) => code(elementVerdict(t, el.value)));
  const rest = idx.rest.length > 0 ? linear(idx.rest, names) : undefined;
  const n = getters.length;
  const parts: Part[] = new Array(n).fill(undefined);
  return {
    kind: 'keyed',
    lookup(w, env) {
      // Getters only read the packet: stopping at the first missing part changes nothing.
      let m: unknown = idx.exact;
      for (let i = 0; i < n; i++) {
        const p = getters[i]!(w, env);
        if (p === undefined) return -1;
        parts[i] = p;
        if (m !== undefined) m = (m as Map<unknown, unknown>).get(indexKey(idx.numeric[i]!, p));
      }
      if (m !== undefined) return m as number;
      return rest ? code(elementVerdict(t, rest(parts, w)?.value)) : -1;
    },
  };
}

function endpointsOf(t: NftTableIR, codes: Int32Array): Endpoints | undefined {
  const shapes: EndpointShape[] = [];
  for (const c of codes) {
    const shape = codeKind(c) === VKind.Goto ? endpointShape(t.program, codeTarget(c)) : undefined;
    if (!shape) return undefined;
    shapes.push(shape);
  }
  if (shapes.length === 0) return undefined;
  return {
    saddrOwn: Uint8Array.from(shapes, (s) => s.saddrOwn), saddr: shapes.map((s) => s.saddr),
    proto: shapes.map((s) => s.proto), dnat: shapes.map((s) => s.dnat),
    port: Int32Array.from(shapes, (s) => s.port),
    touched: 0,
  };
}

/** An element part in the form the packet's value of that field takes; undefined if inexact. */
function exactPart(p: string, name: string): string | number | undefined {
  if (name.endsWith('addr')) return p.includes('/') || p.includes('-') ? undefined : canonicalIP(p);
  if (name === 'meta l4proto') return PROTO_NUM[p] ?? p;
  if (name.endsWith('port')) return /^\d+$/.test(p) ? Number(p) : undefined;
  return name === 'ct state' ? undefined : p;
}

/** The index of a named set for a key layout, built on first use and kept on the table. A later
 *  element with the same exact key replaces an earlier one. */
function setIndex<L>(
  t: NftTableIR, set: string, names: readonly string[], kind: string, leaf: (e: Element) => L,
): SetIndex<L> {
  const key = `${set}|${names.join(',')}|${kind}`;
  let idx = t.indexes.get(key) as SetIndex<L> | undefined;
  if (!idx) {
    const exact = new Map<unknown, unknown>();
    const rest: Element[] = [];
    for (const e of t.sets.get(set) ?? []) {
      const parts = e.key.map((p, i) => exactPart(p, names[i] ?? ''));
      if (parts.length !== names.length || !parts.every((p) => p !== undefined)) {
        rest.push(e);
        continue;
      }
      let m = exact;
      for (let i = 0; i < parts.length - 1; i++) {
        let sub = m.get(parts[i]) as Map<unknown, unknown> | undefined;
        if (!sub) m.set(parts[i], (sub = new Map()));
        m = sub;
      }
      m.set(parts[parts.length - 1], leaf(e));
    }
    idx = { exact, numeric: names.map((n) => !n.endsWith('addr') && n.endsWith('port')), rest };
    t.indexes.set(key, idx as SetIndex<unknown>);
  }
  return idx;
}

export function elementVerdict(
  t: NftTableIR, words: readonly string[] | undefined,
): Verdict | undefined {
  if (!words) return undefined;
  const known = t.verdicts.get(words);
  if (known !== undefined) return known ?? undefined;
  const v = parseVerdict(words);
  t.verdicts.set(words, v ?? null);
  return v;
}

function parseVerdict(words: readonly string[] | undefined): Verdict | undefined {
  if (!words || words.length === 0) return undefined;
  const [w, chain] = words.flatMap((x) => x.split(/\s+/));
  if (w === 'goto' || w === 'jump') return { kind: w, chain: chain! };
  if (w === 'accept' || w === 'drop' || w === 'return' || w === 'continue' || w === 'reject') {
    return { kind: w };
  }
  return undefined;
}
