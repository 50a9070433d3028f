// Reading only some chains of two big iptables dumps: the chains that differing lines name
// (text-align.ts found them without reading every line), gathered with one slice per run of
// rules, plus their service ↔ endpoint companions (iptables-reduce.ts keeps those together).

import { servicePortChains } from '../proxy/iptables/chain-names.js';
import { splitArgs } from '../ruleset/iptables/parse.js';
import { commentOf, serviceOfComment } from './iptables-names.js';
import type { DifferingRegion } from './text-align.js';

export interface Bucketed {
  /** `table\tchain` → the chain's rule lines (`-A …`, counters stripped), newline-joined. */
  readonly rules: Map<string, string>;
  /** `table\tchain` → declaration line (counters stripped). */
  readonly decls: Map<string, string>;
  readonly tables: string[];
}

export const linesOf = (chainText: string | undefined) => (chainText ? chainText.split('\n') : []);

/** The name of the table (`*name` line) the offset is in ('' before any). */
function tableAt(text: string, offset: number): string {
  let name = '';
  let at = text.startsWith('*') ? 0 : text.indexOf('\n*') + 1;
  while (at > 0 || (at === 0 && text.startsWith('*'))) {
    if (at > offset) break;
    name = text.slice(at + 1, text.indexOf('\n', at));
    const next = text.indexOf('\n*', at + 1);
    if (next < 0) break;
    at = next + 1;
  }
  return name;
}

/**
 * The chains (`table\tchain`) a differing line names: outside the differing stretches both
 * texts are the same lines in the same order. Undefined when a table line differs.
 */
export function dirtyChains(sides: readonly [string, string], regions: readonly DifferingRegion[]):
  Set<string> | undefined {
  const dirty = new Set<string>();
  for (const r of regions) {
    for (const [text, [from, to]] of [[sides[0], r.a], [sides[1], r.b]] as const) {
      const table = tableAt(text, from);
      let pos = from;
      while (pos < to) {
        let nl = text.indexOf('\n', pos);
        if (nl < 0 || nl > to) nl = to;
        const line = text.slice(pos, nl);
        pos = nl + 1;
        if (line.startsWith('*') || line === 'COMMIT') return undefined;
        const m = /^(?:-A |:)(\S+)/.exec(line);
        if (m) dirty.add(`${table}\t${m[1]}`);
        else if (line !== '' && !line.startsWith('#')) return undefined;
      }
    }
  }
  return dirty;
}

/**
 * The wanted chains' rule runs and declarations (`table\tchain` keys; every chain without
 * `wanted`), read with one slice per run of rules: rules of one chain are consecutive in save
 * output, so each chain's rules are one slice of the text (no copy, no per-line string) unless a
 * chain's rules are split, when they are joined. Undefined for input with counters.
 */
export function gather(text: string, wanted?: ReadonlySet<string>): Bucketed | undefined {
  const rules = new Map<string, string>();
  const decls = new Map<string, string>();
  const tables: string[] = [];
  const split = new Map<string, string[]>();
  let table = '';
  let prefix = '\t';
  let keepRun = false;
  let runChain = '';
  let runKey = '';
  let spanStart = -1;
  let spanEnd = -1;
  const close = () => {
    if (spanStart < 0) return;
    const body = text.slice(spanStart, spanEnd);
    const prev = rules.get(runKey);
    if (prev === undefined) rules.set(runKey, body);
    else {
      const parts = split.get(runKey);
      if (parts) parts.push(body);
      else split.set(runKey, [prev, body]);
    }
    spanStart = -1;
  };
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    const c = text.charCodeAt(pos);
    if (c === 45 /* - */ && text.startsWith('-A ', pos)) {
      const same = text.startsWith(runChain, pos + 3) &&
        text.charCodeAt(pos + 3 + runChain.length) === 32 && runChain !== '';
      if (!same) {
        close();
        runChain = text.slice(pos + 3, wordEnd(text, pos + 3, nl));
        runKey = prefix + runChain;
        keepRun = !wanted || wanted.has(runKey);
        if (keepRun) spanStart = pos;
      }
      if (keepRun) spanEnd = nl;
    } else if (c === 91 /* [ */) {
      return undefined;
    } else {
      close();
      runChain = '';
      if (c === 42 /* * */) {
        table = text.slice(pos + 1, nl);
        prefix = `${table}\t`;
        tables.push(table);
      } else if (c === 58 /* : */) {
        const end = wordEnd(text, pos + 1, nl);
        const key = prefix + text.slice(pos + 1, end);
        if (!wanted || wanted.has(key)) {
          const policy = end < nl ? text.slice(end + 1, wordEnd(text, end + 1, nl)) : '-';
          decls.set(key, `${text.slice(pos, end)} ${policy}`);
        }
      } else if (nl > pos && c !== 35 /* # */ && !text.startsWith('COMMIT', pos)) {
        return undefined;
      }
    }
    pos = nl + 1;
  }
  close();
  for (const [key, parts] of split) rules.set(key, parts.join('\n'));
  return { rules, decls, tables };
}

function wordEnd(text: string, from: number, end: number): number {
  const sp = text.indexOf(' ', from);
  return sp < 0 || sp > end ? end : sp;
}

/**
 * Chains that must come along with the wanted ones (both ends of service → endpoint jumps, as
 * closeOverEndpoints will ask for them). Undefined when an endpoint chain has no comment to
 * name its Service by (then only a scan of every jump finds it).
 */
export function companions(wanted: ReadonlySet<string>, sides: readonly Bucketed[]):
  Set<string> | undefined {
  const more = new Set<string>();
  const sepKeys: string[] = [];
  for (const key of wanted) {
    const tab = key.indexOf('\t');
    if (key.startsWith('KUBE-SEP-', tab + 1)) sepKeys.push(key);
    if (!/^KUBE-SV[CL]-/.test(key.slice(tab + 1))) continue;
    for (const l of sides.flatMap((s) => linesOf(s.rules.get(key)))) {
      const m = / -j (KUBE-SEP-\S+)/.exec(l);
      if (m) more.add(`${key.slice(0, tab)}\t${m[1]}`);
    }
  }
  for (const key of sepKeys) {
    const table = key.slice(0, key.indexOf('\t'));
    const lines = sides.flatMap((s) => linesOf(s.rules.get(key)));
    if (lines.length > 0) {
      const named = lines.map((l) =>
        [serviceOfComment(commentOf(splitArgs(l))), / -p (\S+)/.exec(l)?.[1]]);
      const sp = named.find(([x, p]) => x && p);
      // Without a comment, a service chain jumping to it names it (only such are reached).
      if (!sp && more.has(key)) continue;
      if (!sp) return undefined;
      const c = servicePortChains(sp[0]!, sp[1]!);
      more.add(`${table}\t${c.svc}`).add(`${table}\t${c.svl}`);
    }
  }
  for (const k of wanted) more.delete(k);
  return more;
}
