// Reading one side of a diff: detect the format (unless given), parse with the mode's registry
// entry, and derive both views (normalised lines, semantic facts). Parse errors name the
// input, the line and the reason (KDP_PARSE).

import { isKdpError, kdpError } from '../errors.js';
import { checkRuleText, proxyMode, proxyModeNames } from '../proxy/registry.js';
import { newFacts } from './facts-util.js';
import type { DiffFormat, FactTable, LoadedTable } from './types.js';

export interface ParsedSide {
  readonly table: LoadedTable;
  readonly lines: readonly string[];
  readonly facts: FactTable;
}

/** The format of a dump: a mode claiming its whole text, else one claiming its first
 *  meaningful line. */
export function detectFormat(text: string, label: string): DiffFormat {
  const modes = proxyModeNames().map((n) => proxyMode(n));
  const whole = modes.find((m) => m.diff.claimsText?.(text));
  if (whole) return whole.name;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || (line.startsWith('#') && !line.startsWith('###'))) continue;
    const claimed = modes.find((m) => m.diff.claimsLine?.(line));
    if (claimed) return claimed.name;
    throw kdpError('KDP_PARSE', `${label}: cannot tell the format from "${line.slice(0, 80)}"` +
      ` (give --format ${proxyModeNames().join('|')})`);
  }
  throw kdpError('KDP_PARSE', `${label}: empty input (give --format for an empty table)`);
}

/**
 * Checks a whole loaded table as the kernel's tools would before applying it (ruleset/check.ts):
 * a truncated transaction, a jump to a missing chain or a loop is KDP_PARSE naming the input and
 * the line, never a diff. An empty table passes only when its format was given (`--format`).
 */
export function checkTable(table: LoadedTable, opts: { allowEmpty?: boolean } = {}): void {
  try {
    checkRuleText(table.format, table.text, opts);
  } catch (e) {
    if (isKdpError(e, 'KDP_PARSE')) {
      throw kdpError('KDP_PARSE', `${table.label}: ${e.message}`, e.details);
    }
    throw e;
  }
}

export function parseSide(table: LoadedTable): ParsedSide {
  try {
    return parseAs(table);
  } catch (e) {
    if (isKdpError(e) && (e.code === 'KDP_PARSE' || e.code === 'KDP_INPUT')) {
      throw kdpError('KDP_PARSE', `${table.label}: ${e.message}`, e.details);
    }
    throw e;
  }
}

function parseAs(table: LoadedTable): ParsedSide {
  const facts = newFacts();
  const lines = proxyMode(table.format).diff.parse(table, facts);
  return { table, lines, facts };
}
