// Reading one side of a diff: detect the format (unless given), parse with the shared ruleset
// parsers, and derive both views (normalised lines, semantic facts). Parse errors name the
// input, the line and the reason (KDP_PARSE).

import { isKdpError, kdpError } from '../errors.js';
import { checkRuleText } from '../ruleset/check.js';
import { parse, tablesOf } from '../ruleset/iptables/parse.js';
import type { IptablesTable } from '../ruleset/iptables/model.js';
import { normalizeRuleset } from '../ruleset/nftables/normalize.js';
import { parseIpvsState } from '../ruleset/ipvs/state-text.js';
import { parseNftAny } from '../trace/nftables/filter.js';
import { newFacts } from './facts-util.js';
import { iptablesFacts } from './iptables-facts.js';
import { ipvsFacts } from './ipvs-facts.js';
import { nftablesFacts } from './nftables-facts.js';
import { normaliseIptables, normaliseIpvs, normaliseNft } from './normalise.js';
import type { DiffFormat, FactTable, LoadedTable } from './types.js';

export interface ParsedSide {
  readonly table: LoadedTable;
  readonly lines: readonly string[];
  readonly facts: FactTable;
}

const NFT_VERBS = /^(table|add|flush|delete|destroy|insert|replace|create)\s/;

export const FORMATS: readonly DiffFormat[] = ['iptables', 'nftables', 'ipvs'];

/** The format of a dump, from its first meaningful line. */
export function detectFormat(text: string, label: string): DiffFormat {
  if (/^### ipvsadm -Sn$/m.test(text)) return 'ipvs';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || (line.startsWith('#') && !line.startsWith('###'))) continue;
    if (/^[*:]|^-[AINXFDRZ] /.test(line) || line === 'COMMIT' || /^\[\d+:\d+\]/.test(line)) {
      return 'iptables';
    }
    if (line.startsWith('{') || NFT_VERBS.test(line)) {
      return 'nftables';
    }
    throw kdpError('KDP_PARSE', `${label}: cannot tell the format from "${line.slice(0, 80)}"` +
      ' (give --format iptables|nftables|ipvs)');
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
  switch (table.format) {
    case 'iptables': {
      const tables = tablesOf(parse(table.text));
      iptablesFacts(tables, facts, table.origins);
      return { table, lines: normaliseIptables(tables), facts };
    }
    case 'nftables': {
      const rs = normalizeRuleset(parseNftAny(table.text));
      nftablesFacts(rs, facts, table.origins);
      return { table, lines: normaliseNft(rs), facts };
    }
    case 'ipvs': {
      const state = parseIpvsState(table.text);
      const ipt: IptablesTable[] = state.iptables.trim() ? tablesOf(parse(state.iptables)) : [];
      ipvsFacts(state, ipt, facts);
      return { table, lines: normaliseIpvs(state, ipt), facts };
    }
  }
}
