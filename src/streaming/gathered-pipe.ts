// A byte relay for a TLS hop (the API server splicing a client's upgraded connection to the
// kubelet's): what arrives in one event-loop turn is written as one buffer. A TLS socket hands
// over its plaintext one record (≤ 16 KB) at a time, and every write to a TLS socket costs a
// record header, a seal call and a syscall on its own; relayed record by record, a 256 MB
// download costs half again as much CPU as written in large pieces (bench/README.md, issue 13).

import type { Readable, Writable } from 'node:stream';

/** Gathered bytes beyond this are written at once rather than at the end of the turn; and the
 *  source is paused while the destination holds more than this (its own high-water mark is
 *  16 KB, less than one gathered write). */
export const GATHER_BYTES = 1024 * 1024;

/**
 * Pipes `from` into `to` (ending `to` when `from` ends), gathering each turn's chunks into one
 * write. Backpressure: `from` pauses while `to` holds more than GATHER_BYTES unwritten.
 */
export function pipeGathered(from: Readable, to: Writable, gatherBytes = GATHER_BYTES): void {
  // Corked writes come out as one writev, which the TLS socket seals as one piece (copied in
  // native memory: no new Buffer per turn for the garbage collector to account for).
  let corked = false;
  let waiting = false;
  const flush = (): void => {
    if (!corked) return;
    corked = false;
    to.uncork();
  };
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed) return;
    if (!corked) {
      corked = true;
      to.cork();
      setImmediate(flush);
    }
    to.write(chunk);
    if (to.writableLength >= gatherBytes) flush();
    if (to.writableLength > gatherBytes && !waiting) {
      waiting = true;
      from.pause();
      to.once('drain', () => {
        waiting = false;
        from.resume();
      });
    }
  });
  from.once('end', () => {
    flush();
    if (!to.destroyed) to.end();
  });
}
