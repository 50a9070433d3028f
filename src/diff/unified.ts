// A unified diff of two normalised line lists (Myers' O(ND) algorithm after trimming the common
// head and tail). Past MAX_EDITS differing lines it gives up on alignment and shows the middle
// as one replacement, which is still a correct (if larger) diff.

export type Edit = { readonly op: ' ' | '-' | '+'; readonly line: string };

const MAX_EDITS = 4000;

export function lineEdits(a: readonly string[], b: readonly string[]): Edit[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const keep = (xs: readonly string[]): Edit[] => xs.map((line) => ({ op: ' ', line }));
  return [...keep(a.slice(0, head)), ...myers(midA, midB), ...keep(a.slice(a.length - tail))];
}

function myers(a: readonly string[], b: readonly string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDITS);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!);
      let x = down ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, off, d);
    }
  }
  return [...a.map((line) => ({ op: '-' as const, line })),
    ...b.map((line) => ({ op: '+' as const, line }))];
}

function backtrack(a: readonly string[], b: readonly string[], trace: Int32Array[], off: number,
  dEnd: number): Edit[] {
  const out: Edit[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!);
    const pk = down ? k + 1 : k - 1;
    const px = v[off + pk]!;
    const py = px - pk;
    while (x > px + (down ? 0 : 1) && y > py + (down ? 1 : 0)) {
      out.push({ op: ' ', line: a[--x]! });
      y--;
    }
    if (down) out.push({ op: '+', line: b[--y]! });
    else out.push({ op: '-', line: a[--x]! });
  }
  while (x > 0 && y > 0) { out.push({ op: ' ', line: a[--x]! }); y--; }
  return out.reverse();
}

/** `--- a` / `+++ b` / `@@ -l,s +l,s @@` hunks with `context` lines around each change. */
export function unifiedDiff(a: readonly string[], b: readonly string[], labelA: string,
  labelB: string, context = 3): string[] {
  const edits = lineEdits(a, b);
  const changed = edits.map((e) => e.op !== ' ');
  if (!changed.includes(true)) return [];
  const out = [`--- ${labelA}`, `+++ ${labelB}`];
  let i = 0;
  let j = 0;
  let la = 1;
  let lb = 1;
  while (i < edits.length) {
    if (!changed[i]) { i++; continue; }
    const start = Math.max(0, i - context);
    let end = i;
    while (end < edits.length) {
      let next = end;
      while (next < edits.length && !changed[next]) next++;
      if (next >= edits.length || next - end > 2 * context) break;
      end = next + 1;
      while (end < edits.length && changed[end]) end++;
    }
    end = Math.min(edits.length, end + context);
    for (; j < start; j++) { if (edits[j]!.op !== '+') la++; if (edits[j]!.op !== '-') lb++; }
    const hunk = edits.slice(start, end);
    const na = hunk.filter((e) => e.op !== '+').length;
    const nb = hunk.filter((e) => e.op !== '-').length;
    out.push(`@@ -${la},${na} +${lb},${nb} @@`, ...hunk.map((e) => `${e.op}${e.line}`));
    i = end;
  }
  return out;
}
