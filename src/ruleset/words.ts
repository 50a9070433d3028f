/**
 * Word offsets of one line, reused across lines so that checking a 10,000-Service dump does not
 * allocate an array of strings per rule: after `split`, word i is `src.slice(ts[i], te[i])`.
 * The arrays are replaced (never resized in place) when a line has more words than they hold,
 * so read `ts`/`te` after each `split`.
 */
export const words = {
  ts: new Int32Array(256),
  te: new Int32Array(256),
};

/** `src.slice(from).split(sep)` as offsets into `words`; answers the number of words. */
export function wordOffsets(src: string, from: number, sep: string): number {
  let n = 0;
  let s = from;
  for (;;) {
    if (n === words.ts.length) {
      const ts = new Int32Array(n * 2);
      const te = new Int32Array(n * 2);
      ts.set(words.ts);
      te.set(words.te);
      words.ts = ts;
      words.te = te;
    }
    const e = src.indexOf(sep, s);
    words.ts[n] = s;
    words.te[n] = e < 0 ? src.length : e;
    n++;
    if (e < 0) return n;
    s = e + 1;
  }
}
