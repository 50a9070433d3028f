// Where a backend writes a large rule text, line by line. Lines are gathered and joined a few
// dozen at a time (a line built by a template is a tree of string pieces, which `join` copies
// out directly), then either copied into a byte buffer that the sink keeps and reuses on every
// sync, or kept as joined pieces.
//
// Why two modes: on the development VM a fresh memory page costs ~13 µs, so copying a 30 MB
// text into fresh memory costs ~150 ms, more than building it. Joined pieces live in fresh
// memory once they outlive the young generation, and so does a new buffer. The first text of a
// sink (a proxier's first, full sync) is gathered in pieces and handed over as they are
// (`finish`): the tool's stdin takes them one after another, and a flat copy is made only for
// a reader that asks for one. Later texts go to the reused buffer, so a partial sync of a few
// MB touches no fresh memory but its final string.

const LINES_PER_JOIN = 64;

export class TextSink {
  private buf: Buffer | undefined;
  private len = 0;
  /** Every byte in `buf` is ASCII (latin1 decoding is then exact and cheapest). */
  private ascii = true;
  /** Piece mode: the text so far, as joined pieces (each ending with a newline). */
  private pieces: string[] | undefined;
  /** Lines not yet written. */
  private readonly lines: string[] = [];
  /** The largest text made so far, in UTF-16 units (0: none yet). */
  private largest = 0;

  /**
   * `maxBufferBytes`: texts that would need a larger buffer are gathered in pieces instead (for
   * a backend whose frequent syncs are small: a buffer sized for its rare full syncs would be
   * fresh memory once more each time it grows, and stay allocated).
   */
  constructor(private readonly maxBufferBytes = Infinity) {}

  /**
   * Starts a new text of about `expectedBytes` (a generous estimate). A sink's first text is
   * gathered in pieces; later ones go to the buffer, allocated or enlarged when too small, with
   * room to spare (reserving more than is written costs nothing: pages are mapped when touched).
   */
  reset(expectedBytes = 0): void {
    this.len = 0;
    this.ascii = true;
    this.lines.length = 0;
    this.pieces = undefined;
    // The estimate is generous; no text has been more than a quarter above the largest yet.
    const need = Math.min(expectedBytes, this.largest + (this.largest >> 2));
    if (this.buf !== undefined && this.buf.length >= need) return;
    if (this.largest === 0 || need > this.maxBufferBytes) {
      this.pieces = [];
      return;
    }
    this.buf = Buffer.allocUnsafe(Math.max(1 << 16, need + (need >> 2)));
  }

  /** Appends `s` followed by a newline. */
  line(s: string): void {
    this.lines.push(s);
    if (this.lines.length === LINES_PER_JOIN) this.flushLines();
  }

  /** Appends `s` followed by a newline, as it is (for large, already joined text). */
  block(s: string): void {
    if (this.lines.length > 0) this.flushLines();
    this.put(s);
  }

  /** The text so far as one flat string; the sink may then be reset. */
  text(): string {
    const out = this.finish();
    return typeof out === 'string' ? out : out.join('');
  }

  /**
   * The text so far, as it was gathered: in piece mode the pieces themselves (each ending with
   * a newline; their concatenation is the text), else one flat string. The sink may then be
   * reset. Pieces spare the flat copy of a large first text where its reader can take them one
   * after another (a tool's stdin).
   */
  finish(): string | string[] {
    if (this.pieces !== undefined) {
      if (this.lines.length > 0) {
        this.lines.push('');
        this.pieces.push(this.lines.join('\n'));
        this.lines.length = 0;
      }
      const out = this.pieces;
      this.pieces = [];
      let n = 0;
      for (const p of out) n += p.length;
      this.largest = Math.max(this.largest, n, 1);
      return out;
    }
    if (this.lines.length > 0) this.flushLines();
    const out = this.buf === undefined || this.len === 0 ? ''
      : this.buf.toString(this.ascii ? 'latin1' : 'utf8', 0, this.len);
    this.largest = Math.max(this.largest, out.length, 1);
    return out;
  }

  private flushLines(): void {
    if (this.pieces !== undefined) {
      // The empty last line gives the piece its closing newline without another string.
      this.lines.push('');
      this.pieces.push(this.lines.join('\n'));
    } else {
      this.put(this.lines.join('\n'));
    }
    this.lines.length = 0;
  }

  /** Appends `s` and a newline. */
  private put(s: string): void {
    if (this.pieces !== undefined) {
      this.pieces.push(s + '\n');
      return;
    }
    if (this.buf === undefined) this.buf = Buffer.allocUnsafe(1 << 16);
    // UTF-8 needs at most 3 bytes per UTF-16 unit, plus the newline.
    if (this.len + 3 * s.length + 1 > this.buf.length) this.grow(3 * s.length + 1);
    const n = this.buf.write(s, this.len);
    if (n !== s.length) this.ascii = false;
    this.len += n;
    this.buf[this.len++] = 10;
  }

  private grow(need: number): void {
    let size = this.buf!.length * 2;
    while (size < this.len + need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf!.copy(next, 0, 0, this.len);
    this.buf = next;
  }
}
