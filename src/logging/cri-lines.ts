// The CRI container log format the kubelet's runtime writes (/var/log/pods/.../<n>.log):
// `<RFC3339Nano time> <stdout|stderr> <tags> <text>`, tags `F` (a full line) or `P` (a part
// of a longer line, continued by the next entry of the same stream). A line that is not in
// the format is kept whole, as stdout at the time it was read, rather than dropped.

import { parseTime, type LogStream } from './record.js';

export interface CriEntry {
  readonly time: number;
  readonly stream: LogStream;
  readonly message: string;
}

/** Joins partial entries per stream; feed it a file's lines in order. */
export interface CriAssembler {
  /** Returns the completed entry, or undefined while a line is still partial. */
  push(line: string, now: number): CriEntry | undefined;
  /** What a stream holds of an unfinished line (at the end of a file), emitted as it is. */
  drain(): CriEntry[];
}

export function buildCriAssembler(): CriAssembler {
  const partial = new Map<LogStream, { time: number; text: string }>();
  return {
    push(line, now) {
      const a = line.indexOf(' ');
      const b = a < 0 ? -1 : line.indexOf(' ', a + 1);
      // An empty line may come without the space after its tag.
      const c = b < 0 ? -1 : (line.indexOf(' ', b + 1) + 1 || line.length + 1) - 1;
      const time = a < 0 ? NaN : parseTime(line.slice(0, a));
      const stream = b < 0 ? '' : line.slice(a + 1, b);
      if (b < 0 || Number.isNaN(time) || (stream !== 'stdout' && stream !== 'stderr')) {
        return { time: now, stream: 'stdout', message: line };
      }
      const tags = line.slice(b + 1, c).split(':');
      const text = line.slice(c + 1);
      const held = partial.get(stream);
      if (tags.includes('P')) {
        partial.set(stream, { time: held?.time ?? time, text: (held?.text ?? '') + text });
        return undefined;
      }
      partial.delete(stream);
      return { time: held?.time ?? time, stream, message: (held?.text ?? '') + text };
    },
    drain() {
      const out = [...partial].map(([stream, h]) => ({ time: h.time, stream, message: h.text }));
      partial.clear();
      return out;
    },
  };
}

/** etcd's log (`--logger zap`): one JSON object a line, its time in `ts`; kept whole as the
 *  message (what `journalctl -u etcd` shows), stderr, timed by `ts` (else when it was read). */
export function buildZapLines(): CriAssembler {
  return {
    push(line, now) {
      let time = NaN;
      const m = /"ts":"([^"]+)"/.exec(line);
      if (m) time = parseTime(m[1]!);
      return { time: Number.isNaN(time) ? now : time, stream: 'stderr', message: line };
    },
    drain: () => [],
  };
}
