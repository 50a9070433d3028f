// Where two big, mostly equal texts differ, at line granularity, found without looking at every
// line: equal stretches are skipped by comparing ever larger blocks in place (galloping), and
// after a difference the two sides are realigned on the nearest run of equal lines within a
// window. Two dumps of one compiler a few changes apart align in a few milliseconds; texts that
// do not realign within the window (reordered, rewritten) give undefined, and the caller reads
// every line instead.

/** A stretch of differing lines: [start, end) offsets on each side (line starts). */
export interface DifferingRegion {
  readonly a: readonly [number, number];
  readonly b: readonly [number, number];
}

const MAX_BLOCK = 1 << 16;
/** Lines looked at on each side to realign after a difference. */
const WINDOW = 400;
/** Equal lines needed to call the sides realigned. */
const ANCHOR = 3;

const sameBlock = (a: string, i: number, b: string, j: number, n: number) =>
  a.slice(i, i + n) === b.slice(j, j + n);

/** From (i, j), how far both texts stay equal. */
function equalRun(a: string, i: number, b: string, j: number): number {
  let n = 0;
  let step = 256;
  for (;;) {
    if (i + n + step <= a.length && j + n + step <= b.length &&
      sameBlock(a, i + n, b, j + n, step)) {
      n += step;
      step = Math.min(step * 4, MAX_BLOCK);
    } else if (step > 1) {
      step >>= 2;
    } else {
      return n;
    }
  }
}

/** Start offsets of up to `max` lines from `from` (plus the end of the last one). */
function lineStarts(text: string, from: number, max: number): number[] {
  const out = [from];
  let pos = from;
  while (out.length <= max && pos < text.length) {
    const nl = text.indexOf('\n', pos);
    pos = nl < 0 ? text.length : nl + 1;
    out.push(pos);
  }
  return out;
}

const lineAt = (text: string, starts: readonly number[], k: number) =>
  text.slice(starts[k], starts[k + 1]);

/** The nearest (x, y) lines ahead on each side that start ANCHOR equal lines (or both ends). */
function realign(a: string, la: number, b: string, lb: number): [number, number] | undefined {
  const sa = lineStarts(a, la, WINDOW + ANCHOR);
  const sb = lineStarts(b, lb, WINDOW + ANCHOR);
  const nA = sa.length - 1;
  const nB = sb.length - 1;
  const atEnd = (s: readonly number[], text: string, k: number) =>
    k === s.length - 1 && s[k] === text.length;
  const where = new Map<string, number[]>();
  for (let y = 0; y < Math.min(nB, WINDOW); y++) {
    const l = lineAt(b, sb, y);
    const list = where.get(l);
    if (list) list.push(y);
    else where.set(l, [y]);
  }
  let best: [number, number] | undefined;
  for (let x = 0; x < Math.min(nA, WINDOW); x++) {
    if (best && x >= best[0] + best[1]) break;
    for (const y of where.get(lineAt(a, sa, x)) ?? []) {
      if (best && x + y >= best[0] + best[1]) break;
      let k = 1;
      while (k < ANCHOR && x + k < nA && y + k < nB &&
        lineAt(a, sa, x + k) === lineAt(b, sb, y + k)) k++;
      const anchored = k === ANCHOR || (atEnd(sa, a, x + k) && atEnd(sb, b, y + k));
      if (anchored) best = [x, y];
    }
  }
  if (best) return [sa[best[0]]!, sb[best[1]]!];
  // Both sides end within the window: the rest differs.
  if (sa[nA] === a.length && sb[nB] === b.length) return [a.length, b.length];
  return undefined;
}

/** The differing stretches of `a` and `b`, or undefined when they do not realign. */
export function differingRegions(a: string, b: string): DifferingRegion[] | undefined {
  const out: DifferingRegion[] = [];
  let i = 0;
  let j = 0;
  for (;;) {
    const n = equalRun(a, i, b, j);
    if (i + n === a.length && j + n === b.length) return out;
    // Back to the start of the line the difference is in (equal on both sides up to there).
    const back = i + n - (a.lastIndexOf('\n', i + n - 1) + 1);
    const la = i + n - Math.min(back, n);
    const lb = j + (la - i);
    const next = realign(a, la, b, lb);
    if (!next) return undefined;
    out.push({ a: [la, next[0]], b: [lb, next[1]] });
    [i, j] = next;
  }
}
