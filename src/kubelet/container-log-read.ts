// Reading a container run's CRI log as upstream's kubelet does (kuberuntime/logs ReadLogs):
// the last `tailLines` records, those not before `since`, each line's content (a `P` record
// continues on the next) with an RFC3339Nano prefix at each line start when `timestamps`,
// cut at `limitBytes`; with `follow`, new records as they are written (a rotated file is
// reopened at its path) until the container stops running or the reader is aborted.

import type { ContainerLogStore, CriRecord, LogFileReader } from './container-log-files.js';
import { formatRfc3339Nano, parseCriRecord } from './container-log-files.js';

export interface LogReadOptions {
  readonly follow?: boolean;
  readonly timestamps?: boolean;
  readonly tailLines?: number;
  /** Nanoseconds since the epoch: records before it are skipped. */
  readonly since?: bigint;
  readonly limitBytes?: number;
}

export interface LogFollowing {
  /** The run is still being written (follow stops at EOF once it is not). */
  running(): boolean;
  readonly signal?: AbortSignal;
  /** How often EOF is re-checked without a write notice (default 250 ms). */
  readonly pollMs?: number;
}

export async function* readContainerLog(
  store: ContainerLogStore, uid: string, container: string, run: number, o: LogReadOptions,
  live?: LogFollowing,
): AsyncGenerator<Buffer> {
  let file: LogFileReader | undefined = store.openRun(uid, container, run);
  if (!file) return;
  let remain = o.limitBytes ?? Number.POSITIVE_INFINITY;
  let offset = 0;
  let atLineStart = true;
  let wake: (() => void) | undefined;
  const unsubscribe = store.onWrite(uid, container, () => wake?.());
  const onAbort = () => wake?.();
  live?.signal?.addEventListener('abort', onAbort);

  /** Complete record lines of `buf` (the rest waits), advancing `offset`. */
  const records = (buf: Buffer): CriRecord[] => {
    const out: CriRecord[] = [];
    let start = 0;
    for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, start)) {
      const r = parseCriRecord(buf.subarray(start, nl));
      if (r) out.push(r);
      start = nl + 1;
    }
    offset += start;
    return out;
  };
  /** The output for these records; undefined once the limit is reached (after `last`). */
  const render = (rs: readonly CriRecord[]): { out: Buffer; done: boolean } => {
    const parts: Buffer[] = [];
    for (const r of rs) {
      if (o.since !== undefined && r.time < o.since) continue;
      if (o.timestamps && atLineStart) parts.push(Buffer.from(`${formatRfc3339Nano(r.time, true)} `));
      parts.push(r.content);
      if (!r.partial) parts.push(Buffer.from('\n'));
      atLineStart = !r.partial;
    }
    let out = Buffer.concat(parts);
    if (out.length >= remain) {
      out = out.subarray(0, remain);
      remain = 0;
      return { out, done: true };
    }
    remain -= out.length;
    return { out, done: false };
  };

  try {
    let first = records(file.read(0));
    if (o.tailLines !== undefined) first = o.tailLines > 0 ? first.slice(-o.tailLines) : [];
    const r0 = render(first);
    if (r0.out.length) yield r0.out;
    if (r0.done || !o.follow || !live) return;
    for (;;) {
      if (live.signal?.aborted) return;
      const before = offset;
      const data = file.read(offset);
      if (data.length) {
        const r = render(records(data));
        if (r.out.length) yield r.out;
        if (r.done) return;
        if (offset > before) continue;
      }
      // At EOF: a new file at the path is a rotation; a stopped run has nothing more to come.
      const now = store.currentId(uid, container, run);
      if (now !== undefined && now !== file.id) {
        const next = store.openRun(uid, container, run);
        if (next) { file.close(); file = next; offset = 0; continue; }
      }
      if (!live.running()) {
        const r = render(records(file.read(offset)));
        if (r.out.length) yield r.out;
        return;
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => { wake = undefined; resolve(); }, live.pollMs ?? 250);
        wake = () => { clearTimeout(t); wake = undefined; resolve(); };
      });
    }
  } finally {
    unsubscribe();
    live?.signal?.removeEventListener('abort', onAbort);
    file.close();
  }
}

/** A run's whole output as `kubectl logs` prints it (no options), read at once. */
export function readContainerLogSync(store: ContainerLogStore, uid: string, container: string, run: number): string {
  const file = store.openRun(uid, container, run);
  if (!file) return '';
  try {
    const buf = file.read(0);
    const parts: Buffer[] = [];
    let start = 0;
    for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, start)) {
      const r = parseCriRecord(buf.subarray(start, nl));
      if (r) parts.push(r.partial ? r.content : Buffer.concat([r.content, Buffer.from('\n')]));
      start = nl + 1;
    }
    return Buffer.concat(parts).toString();
  } finally {
    file.close();
  }
}
