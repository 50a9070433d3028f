// A node's log shipper: what fluent-bit's output with a storage cursor is. It sends the records
// of a log store (the node's own, node-log-agent.ts) in store order, in batches of at most
// maxBatchBytes, to `ship` (the API server, log-ingest-route.ts), and after each acknowledged
// batch saves how far it got — records shipped per segment — to `cursorFile`, so a restarted
// shipper goes on where it stopped: nothing twice unless a batch was sent and its answer lost,
// nothing skipped unless the store's size bound deleted a segment before it could be shipped
// (the control plane unreachable for that long). A failing batch is retried with backoff.

import { readFileSync } from 'node:fs';
import { writePrivateFileSync } from '../util/private-files.js';
import { readSegmentRecords } from './log-reader.js';
import type { LogRecord } from './record.js';
import { listSegments, metaRecordCount } from './segments.js';

export interface LogShipperOptions {
  readonly storeDir: string;
  readonly cursorFile: string;
  /** Resolves once the records are written at the other end; rejects to be retried. */
  ship(records: readonly LogRecord[]): Promise<void>;
  /** Default 500 ms; the backoff after a failure doubles from it up to 10 s. */
  readonly intervalMs?: number;
  /** Default 512 KiB of messages per batch (well under the API server's 3 MiB body limit). */
  readonly maxBatchBytes?: number;
  /** The first failure of a streak (later ones are the same outage). */
  readonly onError?: (e: unknown) => void;
}

export interface LogShipper {
  /** Ships everything there is now; resolves with the number of records shipped. */
  pass(): Promise<number>;
  start(): void;
  /** Stops the timer; a last pass (bounded by `lastPassMs`, default 2 s) if the last one worked. */
  stop(lastPassMs?: number): Promise<void>;
}

type Cursor = Map<number, number>;

function loadCursor(file: string): Cursor {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    return new Map(Object.entries(doc).filter(([k, v]) => /^\d+$/.test(k) && Number.isInteger(v) && (v as number) >= 0)
      .map(([k, v]) => [Number(k), v as number]));
  } catch {
    return new Map();
  }
}

export function buildLogShipper(o: LogShipperOptions): LogShipper {
  const interval = o.intervalMs ?? 500;
  const maxBatch = o.maxBatchBytes ?? 512 * 1024;
  const cursor = loadCursor(o.cursorFile);
  const save = () => writePrivateFileSync(o.cursorFile, `${JSON.stringify(Object.fromEntries(cursor))}\n`);
  let failing = false;
  let running: Promise<number> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function passOnce(): Promise<number> {
    let shipped = 0;
    const segments = listSegments(o.storeDir);
    // A segment the size bound deleted needs no place in the cursor.
    const live = new Set(segments.map((f) => f.seq));
    for (const seq of cursor.keys()) if (!live.has(seq)) cursor.delete(seq);
    for (const f of segments) {
      const from = cursor.get(f.seq) ?? 0;
      const count = metaRecordCount(f.meta);
      if (count <= from) continue;
      // A prefix of [from, count): a record whose line is not on disk yet ends it.
      const records = readSegmentRecords(f, from, count);
      let done = from;
      for (let i = 0; i < records.length;) {
        let bytes = 0;
        let j = i;
        while (j < records.length && (j === i || bytes + records[j]!.message.length + 200 <= maxBatch)) {
          bytes += records[j]!.message.length + 200;
          j++;
        }
        await o.ship(records.slice(i, j));
        done += j - i;
        shipped += j - i;
        cursor.set(f.seq, done);
        save();
        i = j;
      }
    }
    return shipped;
  }

  const pass = (): Promise<number> => {
    running ??= passOnce().then((n) => { failing = false; return n; }, (e: unknown) => {
      if (!failing) o.onError?.(e);
      failing = true;
      throw e;
    }).finally(() => { running = undefined; });
    return running;
  };

  let delay = interval;
  const tick = () => {
    timer = undefined;
    pass().then(() => { delay = interval; }, () => { delay = Math.min(10_000, delay * 2); })
      .finally(() => { if (!stopped) timer = setTimeout(tick, delay); });
  };

  return {
    pass,
    start() { if (!timer && !stopped) timer = setTimeout(tick, interval); },
    async stop(lastPassMs = 2000) {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => 0);
      if (failing) return;
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([pass().catch(() => 0), new Promise((r) => { bound = setTimeout(r, lastPassMs); })]);
      clearTimeout(bound);
    },
  };
}
