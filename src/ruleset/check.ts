// Checking a whole rule dump before it is traced or compared, as the kernel's tools would check
// it before applying it (`iptables-restore --test`, `nft -c -f`): structure (COMMIT, braces),
// references (jumps, sets), jump loops, and literal addresses and ports. The first problem is
// KDP_PARSE naming the line in the whole text. Each mode's check is its registry entry's
// (`checkRuleText` in src/proxy/registry.ts); the ipvs state's check, which spans two formats,
// is here.

import { kdpError } from '../errors.js';
import { validateText as validateIptables } from './iptables/validate.js';
import { parseIpvsState, splitFamilies, splitIpvsState } from './ipvs/state-text.js';

export interface CheckOptions {
  /** An input with no table at all is refused unless this is set (an empty side of a diff). */
  readonly allowEmpty?: boolean;
}

/** The refusal of an input with no table at all. */
export function emptyInputError(): Error {
  return kdpError('KDP_PARSE', 'empty input: no tables (is the file truncated?)', {
    causes: [{ field: 'line 1', reason: 'FieldValueRequired', message: 'no tables' }],
  });
}

/** Each family's state; its supplementary iptables input is checked with whole-text lines. */
export function checkIpvs(text: string): void {
  let base = 0;
  for (const fam of splitFamilies(text)) {
    const at = fam.family ? text.indexOf(`# ${fam.family}\n`, base) : 0;
    const famLine = fam.family ? lineOf(text, at) + 1 : 1;
    base = at + 1;
    // The virtual servers, ipsets and addresses parse strictly (line numbers of the family's
    // text); the supplementary iptables input is checked as restore input.
    parseIpvsState(fam.text);
    const { bodies, offsets } = splitIpvsState(fam.text);
    validateIptables(bodies[2] ?? '', famLine + (offsets[2] ?? 0));
  }
}

/** 1-based line number of offset `at`. */
function lineOf(text: string, at: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
