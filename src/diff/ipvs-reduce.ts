// The fast pre-pass for the semantic view of two large ipvs states (the four-section text of
// `ruleset/ipvs/state-text.ts`). Facts are per virtual server (its `-A` line and `-a` lines),
// per ipset entry and per dummy address, so only the units a differing line names are kept, on
// both sides; `create` lines of ipsets are always kept, and the supplementary iptables section
// goes through the iptables reducer. Undefined when the sections cannot be found in order.

import { SECTION_HEADERS } from '../ruleset/ipvs/state-text.js';
import { reduceIptablesPair } from './iptables-reduce.js';
import { differingRegions } from './text-align.js';

/** Offsets of the four header lines, or undefined. */
function sectionStarts(text: string): number[] | undefined {
  const out: number[] = [];
  let from = 0;
  for (const h of SECTION_HEADERS) {
    const at = out.length === 0 && text.startsWith(`${h}\n`) ? 0 : text.indexOf(`\n${h}\n`, from);
    if (at < 0) return undefined;
    out.push(at === 0 && out.length === 0 ? 0 : at + 1);
    from = out[out.length - 1]! + h.length;
  }
  return out;
}

/**
 * The unit a line belongs to: `-t 10.96.0.10:80` for a virtual or real server line, the line
 * itself for an ipset entry or a dummy address; undefined for lines always kept.
 */
function unitOf(line: string, section: number): string | undefined {
  if (section === 0) {
    const s1 = line.indexOf(' ');
    const s3 = line.indexOf(' ', line.indexOf(' ', s1 + 1) + 1);
    return line.slice(s1 + 1, s3 < 0 ? undefined : s3);
  }
  if (section === 1) return line.startsWith('add ') ? line : undefined;
  return line;
}

/** Calls `each(line, section)` for every body line of sections 0, 1 and 3 in [from, to). */
function forLines(text: string, starts: readonly number[], from: number, to: number,
  each: (line: string, section: number, start: number, next: number) => void): void {
  let pos = from;
  let section = 0;
  while (pos < to) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    while (section < 3 && pos >= starts[section + 1]!) section++;
    if (pos !== starts[section] && section !== 2) each(text.slice(pos, nl), section, pos, nl + 1);
    pos = nl + 1;
  }
}

/** Every server line is `-A`/`-a`, every ipset line `create`/`add` (else: parse it all). */
function plausible(text: string, starts: readonly number[]): boolean {
  let ok = true;
  forLines(text, starts, 0, text.length, (line, section) => {
    if (section === 0) ok &&= line.startsWith('-A ') || line.startsWith('-a ');
    if (section === 1) ok &&= line.startsWith('add ') || line.startsWith('create ');
  });
  return ok;
}

/** The two states with what both share removed, or undefined when not applicable. */
export function reduceIpvsPair(a: string, b: string): [string, string] | undefined {
  const sa = sectionStarts(a);
  const sb = sectionStarts(b);
  const regions = sa && sb ? differingRegions(a, b) : undefined;
  if (!sa || !sb || !regions) return undefined;
  if (!plausible(a, sa) || !plausible(b, sb)) return undefined;
  const dirty = new Set<string>();
  for (const r of regions) {
    for (const [text, s, [from, to]] of [[a, sa, r.a], [b, sb, r.b]] as const) {
      if (s.some((h) => h >= from && h < to)) return undefined;
      forLines(text, s, from, to, (line, section) => {
        const unit = unitOf(line, section);
        if (unit !== undefined) dirty.add(unit);
      });
    }
  }
  const body = (text: string, s: readonly number[], k: number) =>
    text.slice(s[k]! + SECTION_HEADERS[k]!.length + 1, k < 3 ? s[k + 1] : text.length);
  const ipt = reduceIptablesPair(body(a, sa, 2), body(b, sb, 2)) ??
    [body(a, sa, 2), body(b, sb, 2)];
  return [render(a, sa, dirty, ipt[0]), render(b, sb, dirty, ipt[1])];
}

/** The four sections again, with only the kept lines. */
function render(text: string, starts: readonly number[], dirty: ReadonlySet<string>,
  iptables: string): string {
  const sections: string[][] = [[], [], [], []];
  forLines(text, starts, 0, text.length, (line, section) => {
    const unit = unitOf(line, section);
    if (unit === undefined || dirty.has(unit)) sections[section]!.push(line);
  });
  return SECTION_HEADERS.map((h, k) => {
    const lines = k === 2 ? iptables : sections[k]!.map((l) => `${l}\n`).join('');
    return `${h}\n${lines}`;
  }).join('');
}
