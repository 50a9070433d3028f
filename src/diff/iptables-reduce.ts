// A fast pre-pass for the semantic view of two large iptables dumps: most of two 10,000-Service
// tables is identical, and parsing is what costs. Lines are bucketed by chain with plain string
// operations (counters stripped); what is the same on both sides is dropped before parsing:
// - per-rule chains (KUBE-SERVICES, KUBE-NODEPORTS, …: each rule is a fact of its own) keep
//   only the rules not on the other side;
// - per-service chains (KUBE-SVC/SVL/EXT/FW/SEP-…: facts depend on the whole chain) are kept
//   whole when they differ at all, with the KUBE-SEP chains they jump to (for the endpoints).
// Facts of what is dropped would be equal on both sides, so the semantic diff is unchanged.
// When the two texts align (text-align.ts), only the chains that differing lines name are read
// at all (iptables-gather.ts); otherwise every line is bucketed.
// Returns undefined when the text is not plain save/restore output (then parse it all).

import { servicePortChains } from '../proxy/iptables/chain-names.js';
import { splitArgs } from '../ruleset/iptables/parse.js';
import { companions, dirtyChains, gather, linesOf, type Bucketed } from './iptables-gather.js';
import { commentOf, serviceOfComment } from './iptables-names.js';
import { differingRegions } from './text-align.js';

const SERVICE_CHAIN = /^KUBE-(SVC|SVL|EXT|FW|SEP)-/;


/** Lines with counters (`[p:b] -A …`, iptables-save -c): the slower per-line bucketing. */
function bucketLines(text: string): Bucketed | undefined {
  const stripped = text.split('\n')
    .map((l) => (l.startsWith('[') ? l.slice(l.indexOf(' ') + 1) : l));
  return gather(stripped.join('\n'));
}


function keep(a: Bucketed, b: Bucketed, candidates?: Iterable<string>):
  Map<string, string[]>[] {
  const out = [new Map<string, string[]>(), new Map<string, string[]>()];
  const full = new Set<string>();
  for (const key of candidates ?? allKeys(a, b)) {
    const ta = a.rules.get(key);
    const tb = b.rules.get(key);
    if (ta === tb && a.decls.get(key) === b.decls.get(key)) continue;
    const ra = linesOf(ta);
    const rb = linesOf(tb);
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
    out[0]!.set(key, linesOf(a.rules.get(key)));
    out[1]!.set(key, linesOf(b.rules.get(key)));
  }
  return out;
}

function* allKeys(a: Bucketed, b: Bucketed): Generator<string> {
  yield* a.rules.keys();
  for (const k of b.rules.keys()) if (!a.rules.has(k)) yield k;
  for (const m of [a.decls, b.decls]) {
    for (const k of m.keys()) if (!a.rules.has(k) && !b.rules.has(k)) yield k;
  }
}

/**
 * Service and endpoint chains name each other (a KUBE-SVC rule's comment names the endpoint, a
 * KUBE-SEP rule names the Service): keep both ends of every jump together, on both sides. The
 * service chains of an endpoint chain are found by upstream's hash of the Service port its
 * comment names; only without comments is every service chain scanned.
 */
function closeOverEndpoints(full: Set<string>, sides: readonly Bucketed[]): void {
  const queue = [...full];
  const reached = new Set<string>();
  const deferred: string[] = [];
  const add = (k: string) => {
    if (!full.has(k)) { full.add(k); queue.push(k); }
  };
  const drain = () => {
    while (queue.length) {
      const key = queue.pop()!;
      const tab = key.indexOf('\t');
      const table = key.slice(0, tab);
      const lines = sides.flatMap((s) => linesOf(s.rules.get(key)));
      if (/^KUBE-SV[CL]-/.test(key.slice(tab + 1))) {
        for (const l of lines) {
          const m = / -j (KUBE-SEP-\S+)/.exec(l);
          if (m) { reached.add(`${table}\t${m[1]}`); add(`${table}\t${m[1]}`); }
        }
      } else if (key.startsWith('KUBE-SEP-', tab + 1)) {
        const named = lines.map((l) =>
          [serviceOfComment(commentOf(splitArgs(l))), / -p (\S+)/.exec(l)?.[1]]);
        const sp = named.find(([x, p]) => x && p);
        if (!sp) { deferred.push(key); continue; }
        const c = servicePortChains(sp[0]!, sp[1]!);
        for (const n of [c.svc, c.svl]) {
          if (sides.some((s) => s.rules.has(`${table}\t${n}`))) add(`${table}\t${n}`);
        }
      }
    }
  };
  drain();
  // Endpoint chains without comments (large clusters) not reached from a kept service chain:
  // find their service chains by scanning every jump (rare: such a change renames the chain).
  const orphans = deferred.filter((k) => !reached.has(k));
  if (orphans.length === 0) return;
  const reverse = reverseIndex(sides);
  for (const k of orphans) for (const svc of reverse.get(k) ?? []) add(svc);
  drain();
}

function reverseIndex(sides: readonly Bucketed[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const side of sides) {
    for (const [key, body] of side.rules) {
      if (!/\tKUBE-SV[CL]-/.test(key)) continue;
      const table = key.slice(0, key.indexOf('\t'));
      for (const l of linesOf(body)) {
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

/** The reduced pair from the chains that differing lines name, reading only those chains. */
function reduceDirty(a: string, b: string, dirty: ReadonlySet<string>):
  [string, string] | undefined {
  const wanted = new Set(dirty);
  for (let round = 0; round < 4; round++) {
    const ga = gather(a, wanted);
    const gb = gather(b, wanted);
    if (!ga || !gb) return undefined;
    const more = companions(wanted, [ga, gb]);
    if (!more) return undefined;
    if (more.size === 0) {
      const [ka, kb] = keep(ga, gb, dirty);
      return [render(ga, ka!), render(gb, kb!)];
    }
    for (const k of more) wanted.add(k);
  }
  return undefined;
}

/** The two texts with what both share removed, or undefined when not applicable. */
export function reduceIptablesPair(a: string, b: string): [string, string] | undefined {
  const regions = differingRegions(a, b);
  const dirty = regions && dirtyChains([a, b], regions);
  const fast = dirty && reduceDirty(a, b, dirty);
  if (fast) return fast;
  const ba = gather(a) ?? bucketLines(a);
  const bb = gather(b) ?? bucketLines(b);
  if (!ba || !bb) return undefined;
  const [ka, kb] = keep(ba, bb);
  return [render(ba, ka!), render(bb, kb!)];
}
