// `--grep` over a segment's message file without parsing a record per line. When every match
// must contain some run of plain characters (grep's "must" string), that run is searched for in
// the raw bytes and only the lines holding it are decoded and tested. Otherwise the pattern runs
// with flags `gm` over large decoded chunks, and only a line where it found something is
// checked again, alone, with the pattern's own flags; after a hit the search goes on at the
// next line, so a match that ran across a newline can hide no later line. `^`/`$` mean the
// start and end of a message either way.

import { closeSync, openSync, readSync } from 'node:fs';
import { isAscii } from 'node:buffer';

export interface GrepPattern {
  /** Flags `gm` (+ the user's): finds candidate lines in a chunk. */
  readonly scan: RegExp;
  /** The user's flags: decides one message. */
  readonly test: RegExp;
  /** Bytes every match contains, when the pattern has such a run (grep's "must" string):
   *  searched for in the raw bytes, and only the lines holding it are decoded and tested. */
  readonly literal?: Buffer;
}

/** `(?i)` at the start (RE2/Go style) makes the pattern case-insensitive. Throws SyntaxError. */
export function compileGrep(source: string): GrepPattern {
  let flags = '';
  let body = source;
  if (body.startsWith('(?i)')) { flags = 'i'; body = body.slice(4); }
  const scan = new RegExp(body, `${flags}gm`);
  const lit = flags ? undefined : requiredLiteral(body);
  const literal = lit && Buffer.byteLength(lit) >= 3 ? Buffer.from(lit) : undefined;
  return { scan, test: new RegExp(body, flags), ...(literal ? { literal } : {}) };
}

/**
 * The longest run of plain characters outside any group or class that every match of the
 * (valid) pattern contains; undefined when there is none (a top-level `|`). Conservative: a
 * character a quantifier may drop is left out, and anything unusual ends the run.
 */
export function requiredLiteral(body: string): string | undefined {
  let best = '';
  let cur = '';
  let depth = 0;
  let lastLiteral = false; // the previous atom was a character appended to `cur`
  const end = () => { if (cur.length > best.length) best = cur; cur = ''; lastLiteral = false; };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    let lit: string | undefined;
    if (c === '\\') {
      const n = body[++i];
      if (n === undefined || /[A-Za-z0-9]/.test(n)) { // a class or code (\d \b \x41 \u{…} \p{…} \k<…> \1)
        i = skipEscapeArgument(body, i);
        end();
        continue;
      }
      lit = n;
    } else if (c === '(') {
      depth++; end(); continue;
    } else if (c === ')') {
      depth--; end(); continue;
    } else if (c === '[') {
      for (i++; i < body.length && body[i] !== ']'; i++) if (body[i] === '\\') i++;
      end(); continue;
    } else if (c === '*' || c === '?' || c === '{') {
      if (lastLiteral) cur = cur.slice(0, -1); // the character before may be absent
      if (c === '{') while (i < body.length && body[i] !== '}') i++;
      end(); continue;
    } else if (c === '+') {
      end(); continue; // one is there; what follows need not be next to it
    } else if (c === '|') {
      if (depth === 0) return undefined;
      end(); continue;
    } else if (c === '.' || c === '^' || c === '$') { end(); continue; } else lit = c;
    if (depth > 0) { end(); continue; }
    cur += lit;
    lastLiteral = true;
  }
  end();
  return best || undefined;
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
      if (p.literal) scanLiteral(buf.subarray(0, cut), pos, p, p.literal, hit);
      else scanChunk(buf.subarray(0, cut), pos, p, hit);
      pos += cut;
    }
  } finally {
    closeSync(fd);
  }
  return pos - start;
}

/** Index of the last character of the escape whose letter is at `i`. */
function skipEscapeArgument(body: string, i: number): number {
  const n = body[i];
  const upTo = (close: string) => { const j = body.indexOf(close, i); return j < 0 ? body.length : j; };
  if (n === 'x') return i + 2;
  if (n === 'c') return i + 1;
  if (n === 'u') return body[i + 1] === '{' ? upTo('}') : i + 4;
  if (n === 'p' || n === 'P') return body[i + 1] === '{' ? upTo('}') : i;
  if (n === 'k') return body[i + 1] === '<' ? upTo('>') : i;
  if (n !== undefined && /[0-9]/.test(n)) { while (/[0-9]/.test(body[i + 1] ?? '')) i++; }
  return i;
}

/** Lines holding `lit`, each decoded and tested alone; where they are dense (more than one in
 *  ~256 bytes) the rest of the chunk is scanned decoded, which is then cheaper. */
function scanLiteral(chunk: Buffer, base: number, p: GrepPattern, lit: Buffer,
  hit: (o: number, l: string) => void) {
  let pos = 0;
  let candidates = 0;
  for (;;) {
    const i = chunk.indexOf(lit, pos);
    if (i < 0) return;
    const start = i === 0 ? 0 : chunk.lastIndexOf(10, i - 1) + 1;
    let end = chunk.indexOf(10, i + lit.length);
    if (end < 0) end = chunk.length;
    const line = chunk.toString('utf8', start, end);
    if (p.test.test(line)) hit(base + start, line);
    pos = end + 1;
    if (pos >= chunk.length) return;
    if (++candidates > 64 && candidates * 256 > pos) {
      scanChunk(chunk.subarray(pos), base + pos, p, hit);
      return;
    }
  }
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
    if (!m || m.index >= text.length) break; // (the empty "line" after the last newline is none)
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
