// `kdp diff` without the CLI: two loaded tables → the chosen view, rendered, with the exit
// status of diff(1): 0 same, 1 different. Mixing formats needs --behaviour (KDP_DIFF).

import { kdpError } from '../errors.js';
import { proxyMode } from '../proxy/registry.js';
import { behaviourDiff, type BehaviourOptions, type BehaviourResult } from './behaviour.js';
import { emptyText, familySections, withFamilies, type Family } from './families.js';
import { parseSide, type ParsedSide } from './load.js';
import { reducePair } from './reduce.js';
import { behaviourJson, renderBehaviour, renderSemantic, renderUnified } from './render.js';
import { semanticDiff } from './semantic.js';
import type { LoadedTable } from './types.js';
import { unifiedDiff } from './unified.js';

export type DiffView = 'semantic' | 'rules' | 'behaviour';

export interface DiffRequest extends BehaviourOptions {
  readonly view: DiffView;
  readonly json: boolean;
  readonly colour: boolean;
}

export interface DiffOutput {
  readonly text: string;
  /** 0 same, 1 different (for the chosen view). */
  readonly status: 0 | 1;
}

export function runDiff(a: LoadedTable, b: LoadedTable, req: DiffRequest): DiffOutput {
  if (a.format !== b.format && req.view !== 'behaviour') {
    throw kdpError('KDP_DIFF', `${a.label} is ${a.format} and ${b.label} is ${b.format}: ` +
      'tables of different modes compare only by behaviour (add --behaviour)');
  }
  const pairs = familyPairs(a, b);
  try {
    return viewOf(pairs, req);
  } catch (e) {
    // A dual-stack dump was cut in sections: name the line of the whole input if it fails.
    if (pairs.length > 1) {
      for (const t of [a, b]) if (proxyMode(t.format).diff.reparseWhole) parseSide(t);
    }
    throw e;
  }
}

/** The two dumps as pairs of single-family tables (one pair, without family, when single). */
interface FamilyPair {
  readonly family?: Family;
  readonly a: LoadedTable;
  readonly b: LoadedTable;
}

function familyPairs(a: LoadedTable, b: LoadedTable): FamilyPair[] {
  const sa = familySections(a.format, a.text);
  const sb = familySections(b.format, b.text);
  if (sa.length === 1 && sb.length === 1 && (sa[0]!.family === sb[0]!.family ||
    !sa[0]!.family || !sb[0]!.family)) return [{ a, b }];
  const fa = withFamilies(a.format, sa);
  const fb = withFamilies(b.format, sb);
  const side = (t: LoadedTable, sections: typeof fa, family: Family): LoadedTable => ({
    ...t, label: `${t.label} (${family})`,
    text: sections.filter((s) => s.family === family).map((s) => s.text).join('') ||
      emptyText(t.format),
  });
  return (['IPv4', 'IPv6'] as const)
    .filter((f) => fa.some((s) => s.family === f) || fb.some((s) => s.family === f))
    .map((family) => ({ family, a: side(a, fa, family), b: side(b, fb, family) }));
}

const dump = (o: unknown) => `${JSON.stringify(o, null, 2)}\n`;

function viewOf(pairs: readonly FamilyPair[], req: DiffRequest): DiffOutput {
  if (req.view === 'behaviour') return behaviour(pairs, req);
  if (req.view === 'rules') {
    let differs = false;
    const lines = pairs.flatMap(({ a, b }) => {
      const sa = parseSide(a);
      const sb = parseSide(b);
      differs ||= !sameLines(sa.lines, sb.lines);
      return unifiedDiff(sa.lines, sb.lines, a.label, b.label);
    });
    const text = req.json ? dump({ view: 'rules', diff: lines }) : renderUnified(lines, req.colour);
    return { text, status: differs ? 1 : 0 };
  }
  let textDiffers = false;
  const changes = pairs.flatMap(({ family, a, b }) => {
    const [sa, sb] = reducedSides(a, b) ?? [parseSide(a), parseSide(b)];
    textDiffers ||= !sameLines(sa.lines, sb.lines);
    return semanticDiff(sa.facts, sb.facts).map((c) => (family ? { family, ...c } : c));
  });
  const text = req.json ? dump({ view: 'semantic', textDiffers, changes })
    : renderSemantic(changes, textDiffers);
  return { text, status: textDiffers || changes.length ? 1 : 0 };
}

/**
 * The semantic view of two dumps parses only what differs (reduce.ts). A parse error there is
 * reported from the whole input, so its line number is the file's.
 */
function reducedSides(a: LoadedTable, b: LoadedTable): [ParsedSide, ParsedSide] | undefined {
  const reduced = a.format === b.format ? reducePair(a.format, a.text, b.text) : undefined;
  if (!reduced) return undefined;
  try {
    return [parseSide({ ...a, text: reduced[0] }), parseSide({ ...b, text: reduced[1] })];
  } catch {
    return undefined;
  }
}

/** What changed between two tables of one format, per Service port (`ns/name:port`): groups
 *  only in `b` are added, only in `a` removed, in both with different facts changed. */
export interface ServiceChanges {
  readonly added: string[];
  readonly changed: string[];
  readonly removed: string[];
}

export function serviceChanges(a: LoadedTable, b: LoadedTable): ServiceChanges {
  const out: ServiceChanges = { added: [], changed: [], removed: [] };
  if (a.text === b.text) return out;
  const [sa, sb] = reducedSides(a, b) ?? [parseSide(a), parseSide(b)];
  const groups = new Set(semanticDiff(sa.facts, sb.facts).map((c) => c.group).filter(Boolean));
  for (const g of [...groups].sort()) {
    const before = sa.facts.groups.has(g);
    const after = sb.facts.groups.has(g);
    (before && after ? out.changed : after ? out.added : out.removed).push(g);
  }
  return out;
}

const sameLines = (x: readonly string[], y: readonly string[]) =>
  x.length === y.length && x.every((l, i) => l === y[i]);

/** Parse errors surface from the tracer's own parsers; "differ in text" is judged cheaply. */
function behaviour(pairs: readonly FamilyPair[], req: DiffRequest): DiffOutput {
  let textDiffers = false;
  const results = pairs.map(({ a, b }) => {
    textDiffers ||= a.format !== b.format || a.text !== b.text &&
      (() => { const r = reducedSides(a, b); return !r || !sameLines(r[0].lines, r[1].lines); })();
    try {
      return behaviourDiff(a, b, req);
    } catch (e) {
      // Name the input and the line: re-parse each side with the diff's own reader.
      parseSide(a);
      parseSide(b);
      throw e;
    }
  });
  const r: BehaviourResult = {
    probes: results.reduce((n, x) => n + x.probes, 0),
    differences: results.flatMap((x) => x.differences),
    notes: [...new Set(results.flatMap((x) => x.notes))],
  };
  const text = req.json ? `${JSON.stringify(behaviourJson(r, textDiffers), null, 2)}\n`
    : renderBehaviour(r, textDiffers);
  return { text, status: r.differences.length ? 1 : 0 };
}
