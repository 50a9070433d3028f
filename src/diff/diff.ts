// `kdp diff` without the CLI: two loaded tables → the chosen view, rendered, with the exit
// status of diff(1): 0 same, 1 different. Mixing formats needs --behaviour (KDP_DIFF).

import { kdpError } from '../errors.js';
import { behaviourDiff, type BehaviourOptions } from './behaviour.js';
import { reduceIptablesPair } from './iptables-reduce.js';
import { parseSide } from './load.js';
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
  if (req.view === 'behaviour') return behaviour(a, b, req);
  if (req.view === 'semantic' && a.format === 'iptables' && b.format === 'iptables') {
    const fast = fastSemantic(a, b, req);
    if (fast) return fast;
  }
  const sa = parseSide(a);
  const sb = parseSide(b);
  const textDiffers = a.format !== b.format || sa.lines.length !== sb.lines.length ||
    sa.lines.some((l, i) => l !== sb.lines[i]);
  const dump = (o: unknown) => `${JSON.stringify(o, null, 2)}\n`;
  if (req.view === 'rules') {
    const lines = unifiedDiff(sa.lines, sb.lines, a.label, b.label);
    const text = req.json ? dump({ view: 'rules', diff: lines }) : renderUnified(lines, req.colour);
    return { text, status: textDiffers ? 1 : 0 };
  }
  const changes = semanticDiff(sa.facts, sb.facts);
  const text = req.json ? dump({ view: 'semantic', textDiffers, changes })
    : renderSemantic(changes, textDiffers);
  return { text, status: textDiffers || changes.length ? 1 : 0 };
}

/**
 * The semantic view of two iptables dumps parses only what differs (iptables-reduce.ts). A
 * parse error there is reported from the whole input, so its line number is the file's.
 */
function fastSemantic(a: LoadedTable, b: LoadedTable, req: DiffRequest): DiffOutput | undefined {
  const reduced = reduceIptablesPair(a.text, b.text);
  if (!reduced) return undefined;
  const textDiffers = reduced[0] !== reduced[1];
  let changes;
  try {
    changes = semanticDiff(parseSide({ ...a, text: reduced[0] }).facts,
      parseSide({ ...b, text: reduced[1] }).facts);
  } catch {
    return undefined;
  }
  const text = req.json ? `${JSON.stringify({ view: 'semantic', textDiffers, changes }, null, 2)}\n`
    : renderSemantic(changes, textDiffers);
  return { text, status: textDiffers || changes.length ? 1 : 0 };
}

/** Parse errors surface from the tracer's own parsers; "differ in text" is judged cheaply. */
function behaviour(a: LoadedTable, b: LoadedTable, req: DiffRequest): DiffOutput {
  const textDiffers = a.format !== b.format || (a.format === 'iptables'
    ? (() => { const r = reduceIptablesPair(a.text, b.text); return !r || r[0] !== r[1]; })()
    : a.text !== b.text);
  let r;
  try {
    r = behaviourDiff(a, b, req);
  } catch (e) {
    // Name the input and the line: re-parse each side with the diff's own reader.
    parseSide(a);
    parseSide(b);
    throw e;
  }
  const text = req.json ? `${JSON.stringify(behaviourJson(r, textDiffers), null, 2)}\n`
    : renderBehaviour(r, textDiffers);
  return { text, status: r.differences.length ? 1 : 0 };
}
