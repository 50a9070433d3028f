// The resize stream/channel: a sequence of JSON objects {"Width":w,"Height":h} (client-go's
// TerminalSize, capitalised Go field names), read with a streaming decoder as the kubelet's
// handleResizeEvents does; a malformed object ends the watching, as json.Decoder's error does.

import type { Readable } from 'node:stream';

/** Splits concatenated top-level JSON objects out of a growing text. */
export class JsonObjectSplitter {
  private text = '';

  push(chunk: string): string[] {
    this.text += chunk;
    const out: string[] = [];
    let depth = 0;
    let inString = false;
    let escaped = false;
    let start = -1;
    let consumed = 0;
    for (let i = 0; i < this.text.length; i++) {
      const c = this.text[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{') {
        if (depth === 0) start = i;
        depth++;
      } else if (c === '}') {
        depth--;
        if (depth === 0) {
          out.push(this.text.slice(start, i + 1));
          consumed = i + 1;
        }
      } else if (depth === 0 && !/\s/.test(c!)) {
        throw new Error(`resize: unexpected ${JSON.stringify(c)} between objects`);
      }
    }
    this.text = this.text.slice(consumed);
    return out;
  }
}

/** Calls `onResize(cols, rows)` for every size the client sends. */
export function watchResize(
  stream: Readable, onResize: (cols: number, rows: number) => void,
): void {
  const splitter = new JsonObjectSplitter();
  stream.setEncoding('utf8');
  stream.on('error', () => {});
  stream.on('data', (chunk: string) => {
    let objects: string[];
    try {
      objects = splitter.push(chunk);
    } catch {
      stream.removeAllListeners('data');
      stream.resume();
      return;
    }
    for (const text of objects) {
      try {
        const size = JSON.parse(text) as { Width?: unknown; Height?: unknown };
        const w = Number(size.Width ?? 0);
        const h = Number(size.Height ?? 0);
        if (Number.isInteger(w) && Number.isInteger(h) && w >= 0 && h >= 0) onResize(w, h);
      } catch {
        // not JSON: ignored like a decode error
      }
    }
  });
}
