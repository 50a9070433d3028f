// `--grep` over a segment's message file without parsing a record per line: the pattern runs
// with flags `gm` over large decoded chunks (V8 searches a literal at memory speed), and only a
// line where it found something is checked again, alone, with the pattern's own flags. After a
// hit the search goes on at the next line, so a match that ran across a newline can hide no
// later line. `^`/`$` mean the start and end of a message in both passes.

import { closeSync, openSync, readSync } from 'node:fs';
import { isAscii } from 'node:buffer';

export interface GrepPattern {
  /** Flags `gm` (+ the user's): finds candidate lines in a chunk. */
  readonly scan: RegExp;
  /** The user's flags: decides one message. */
  readonly test: RegExp;
}

/** `(?i)` at the start (RE2/Go style) makes the pattern case-insensitive. Throws SyntaxError. */
export function compileGrep(source: string): GrepPattern {
  let flags = '';
  let body = source;
  if (body.startsWith('(?i)')) { flags = 'i'; body = body.slice(4); }
  return { scan: new RegExp(body, `${flags}gm`), test: new RegExp(body, flags) };
}

const CHUNK = 8 * 1024 * 1024;

/**
 * Calls `hit(byteOffset, line)` for every line of `file` in [start, end) that `p` matches, in
 * order; `end` must be at a line boundary (just after a newline). Returns the bytes scanned.
 */
export function grepFile(file: string, start: number, end: number, p: GrepPattern,
  hit: (offset: number, line: string) => void): number {
  let fd: number;
  try { fd = openSync(file, 'r'); } catch { return 0; }
  let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(end - start, 1)));
  let pos = start;
  try {
    while (pos < end) {
      const want = Math.min(buf.length, end - pos);
      const n = readSync(fd, buf, 0, want, pos);
      if (n <= 0) break;
      let cut = n;
      if (pos + n < end) {
        cut = buf.lastIndexOf(10, n - 1) + 1;
        if (cut === 0) { // one line longer than the buffer: grow and read again
          buf = Buffer.allocUnsafe(buf.length * 2);
          continue;
        }
      }
      scanChunk(buf.subarray(0, cut), pos, p, hit);
      pos += cut;
    }
  } finally {
    closeSync(fd);
  }
  return pos - start;
}

function scanChunk(chunk: Buffer, base: number, p: GrepPattern, hit: (o: number, l: string) => void) {
  const ascii = isAscii(chunk);
  const text = ascii ? chunk.toString('latin1') : chunk.toString('utf8');
  const re = p.scan;
  re.lastIndex = 0;
  // For non-ASCII text, char index → byte offset is carried forward from the last line found.
  let charAt = 0;
  let byteAt = 0;
  while (re.lastIndex < text.length) {
    const m = re.exec(text);
    if (!m) break;
    // The line holding the hit's first character (a hit on a newline: the line it ends).
    const lineStart = m.index === 0 ? 0 : text.lastIndexOf('\n', m.index - 1) + 1;
    let lineEnd = text.indexOf('\n', m.index);
    if (lineEnd < 0) lineEnd = text.length;
    const line = text.slice(lineStart, lineEnd);
    if (p.test.test(line)) {
      let offset = lineStart;
      if (!ascii) {
        byteAt += Buffer.byteLength(text.slice(charAt, lineStart));
        charAt = lineStart;
        offset = byteAt;
      }
      hit(base + offset, line);
    }
    re.lastIndex = lineEnd + 1;
  }
}
