// A fast pre-pass for the semantic view of two large iptables dumps: most of two 10,000-Service
// tables is identical, and parsing is what costs. Lines are bucketed by chain with plain string
// operations (counters stripped); what is the same on both sides is dropped before parsing:
// - per-rule chains (KUBE-SERVICES, KUBE-NODEPORTS, …: each rule is a fact of its own) keep
//   only the rules not on the other side;
// - per-service chains (KUBE-SVC/SVL/EXT/FW/SEP-…: facts depend on the whole chain) are kept
//   whole when they differ at all, with the KUBE-SEP chains they jump to (for the endpoints).
// Facts of what is dropped would be equal on both sides, so the semantic diff is unchanged.
// Returns undefined when the text is not plain save/restore output (then parse it all).

import { servicePortChains } from '../proxy/iptables/chain-names.js';
import { splitArgs } from '../ruleset/iptables/parse.js';
import { commentOf, serviceOfComment } from './iptables-names.js';

interface Bucketed {
  /** `table\tchain` → rule lines (`-A …`, counters stripped), in order. */
  readonly rules: Map<string, string[]>;
  /** `table\tchain` → declaration line (counters stripped). */
  readonly decls: Map<string, string>;
  readonly tables: string[];
}

const SERVICE_CHAIN = /^KUBE-(SVC|SVL|EXT|FW|SEP)-/;

function bucket(text: string): Bucketed | undefined {
  const rules = new Map<string, string[]>();
  const decls = new Map<string, string>();
  const tables: string[] = [];
  let table = '';
  // Rules of one chain are consecutive in save output: look the bucket up only on a change.
  let chain = '';
  let list: string[] = [];
  for (let line of text.split('\n')) {
    if (line.charCodeAt(0) === 91 /* [ */) line = line.slice(line.indexOf(' ') + 1);
    if (line.startsWith('-A ')) {
      const sp = line.indexOf(' ', 3);
      const name = line.slice(3, sp < 0 ? undefined : sp);
      if (name !== chain) {
        chain = name;
        const key = `${table}\t${name}`;
        list = rules.get(key) ?? [];
        rules.set(key, list);
      }
      list.push(line);
    } else if (line === '' || line.startsWith('#') || line === 'COMMIT') {
      continue;
    } else if (line.startsWith('*')) {
      table = line.slice(1);
      tables.push(table);
      chain = '';
    } else if (line.startsWith(':')) {
      const sp = line.indexOf(' ');
      const name = line.slice(1, sp < 0 ? undefined : sp);
      const policy = sp < 0 ? '-' : line.slice(sp + 1).split(' ')[0]!;
      decls.set(`${table}\t${name}`, `:${name} ${policy}`);
    } else {
      return undefined;
    }
  }
  return { rules, decls, tables };
}

const same = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
  a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

function keep(a: Bucketed, b: Bucketed): Map<string, string[]>[] {
  const out = [new Map<string, string[]>(), new Map<string, string[]>()];
  const full = new Set<string>();
  const keys = new Set([...a.rules.keys(), ...b.rules.keys(), ...a.decls.keys(), ...b.decls.keys()]);
  for (const key of keys) {
    const ra = a.rules.get(key) ?? [];
    const rb = b.rules.get(key) ?? [];
    if (same(ra, rb) && a.decls.get(key) === b.decls.get(key)) continue;
    const chain = key.slice(key.indexOf('\t') + 1);
    if (SERVICE_CHAIN.test(chain) || a.decls.get(key) !== b.decls.get(key)) {
      full.add(key);
      continue;
    }
    const inB = new Set(rb);
    const inA = new Set(ra);
    out[0]!.set(key, ra.filter((l) => !inB.has(l)));
    out[1]!.set(key, rb.filter((l) => !inA.has(l)));
  }
  closeOverEndpoints(full, [a, b]);
  for (const key of full) {
    out[0]!.set(key, a.rules.get(key) ?? []);
    out[1]!.set(key, b.rules.get(key) ?? []);
  }
  return out;
}

/**
 * Service and endpoint chains name each other (a KUBE-SVC rule's comment names the endpoint, a
 * KUBE-SEP rule names the Service): keep both ends of every jump together, on both sides. The
 * service chains of an endpoint chain are found by upstream's hash of the Service port its
 * comment names; only without comments is every service chain scanned.
 */
function closeOverEndpoints(full: Set<string>, sides: readonly Bucketed[]): void {
  let reverse: Map<string, string[]> | undefined;
  const queue = [...full];
  const add = (k: string) => {
    if (!full.has(k)) { full.add(k); queue.push(k); }
  };
  while (queue.length) {
    const key = queue.pop()!;
    const tab = key.indexOf('\t');
    const table = key.slice(0, tab);
    const lines = sides.flatMap((s) => s.rules.get(key) ?? []);
    if (/^KUBE-SV[CL]-/.test(key.slice(tab + 1))) {
      for (const l of lines) {
        const m = / -j (KUBE-SEP-\S+)/.exec(l);
        if (m) add(`${table}\t${m[1]}`);
      }
    } else if (key.startsWith('KUBE-SEP-', tab + 1)) {
      const named = lines.map((l) => [serviceOfComment(commentOf(splitArgs(l))), / -p (\S+)/.exec(l)?.[1]]);
      const sp = named.find(([x, p]) => x && p);
      if (sp) {
        const c = servicePortChains(sp[0]!, sp[1]!);
        for (const n of [c.svc, c.svl]) if (sides.some((s) => s.rules.has(`${table}\t${n}`))) add(`${table}\t${n}`);
      } else {
        reverse ??= reverseIndex(sides);
        for (const k of reverse.get(key) ?? []) add(k);
      }
    }
  }
}

function reverseIndex(sides: readonly Bucketed[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const side of sides) {
    for (const [key, lines] of side.rules) {
      if (!/\tKUBE-SV[CL]-/.test(key)) continue;
      const table = key.slice(0, key.indexOf('\t'));
      for (const l of lines) {
        const m = / -j (KUBE-SEP-\S+)/.exec(l);
        if (!m) continue;
        const sep = `${table}\t${m[1]}`;
        let list = out.get(sep);
        if (!list) out.set(sep, (list = []));
        list.push(key);
      }
    }
  }
  return out;
}

function render(side: Bucketed, kept: Map<string, string[]>): string {
  const out: string[] = [];
  for (const table of side.tables) {
    const prefix = `${table}\t`;
    const keys = [...kept.keys()].filter((k) => k.startsWith(prefix));
    out.push(`*${table}`);
    for (const k of keys) {
      const d = side.decls.get(k);
      if (d) out.push(d);
    }
    for (const k of keys) out.push(...kept.get(k)!);
    out.push('COMMIT');
  }
  return `${out.join('\n')}\n`;
}

/** The two texts with what both share removed, or undefined when not applicable. */
export function reduceIptablesPair(a: string, b: string): [string, string] | undefined {
  const ba = bucket(a);
  const bb = bucket(b);
  if (!ba || !bb) return undefined;
  const [ka, kb] = keep(ba, bb);
  return [render(ba, ka!), render(bb, kb!)];
}
