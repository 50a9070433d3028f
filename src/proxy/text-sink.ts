// Where a backend writes a large rule text, line by line. Lines are gathered and joined a few
// dozen at a time (a line built by a template is a tree of string pieces, which `join` copies
// out directly), then either copied into a byte buffer that the sink keeps and reuses on every
// sync, or kept as joined pieces for one final join.
//
// Why two modes: on the development VM a fresh memory page costs ~13 µs, so copying a 30 MB
// text into fresh memory costs ~150 ms, more than building it. A sync's text is made once into
// a flat string either way (the final copy). Joined pieces also live in fresh memory once they
// outlive the young generation, and so does a new buffer: a text costs two copies into fresh
// memory in both modes, except in a reused buffer, where it costs one (a partial sync of a few
// MB then touches no fresh memory but its final string). The first text of a sink is gathered
// in pieces; later ones are buffered.

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
    if (this.lines.length > 0) this.flushLines();
    let out: string;
    if (this.pieces !== undefined) {
      out = this.pieces.join('');
      this.pieces = [];
    } else if (this.buf === undefined || this.len === 0) {
      out = '';
    } else {
      out = this.buf.toString(this.ascii ? 'latin1' : 'utf8', 0, this.len);
    }
    this.largest = Math.max(this.largest, out.length, 1);
    return out;
  }

  private flushLines(): void {
    this.put(this.lines.join('\n'));
    this.lines.length = 0;
  }

  /** Appends `s` and a newline. */
  private put(s: string): void {
    if (this.pieces !== undefined) {
      this.pieces.push(s, '\n');
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
