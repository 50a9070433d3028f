// A work queue with upstream client-go semantics: an item is queued at most once; an item added
// while it is being processed is re-queued when `done` is called (so one key is never worked on
// by two workers at once); `addRateLimited` retries with per-item exponential back-off until
// `forget`; `addAfter` delays.

export interface WorkQueueOptions {
  /** First retry delay; doubles per failure of the same item. Default 5 ms. */
  readonly baseDelayMs?: number;
  /** Upper bound of the retry delay. Default 60 s. */
  readonly maxDelayMs?: number;
}

export interface WorkQueue<K = string> {
  add(item: K): void;
  addAfter(item: K, delayMs: number): void;
  addRateLimited(item: K): void;
  /** Clears the item's failure count. */
  forget(item: K): void;
  numRequeues(item: K): number;
  /** Resolves with the next item, or undefined once shut down. */
  get(): Promise<K | undefined>;
  done(item: K): void;
  len(): number;
  shutDown(): void;
  isShuttingDown(): boolean;
}

export function buildWorkQueue<K = string>(opts: WorkQueueOptions = {}): WorkQueue<K> {
  const base = opts.baseDelayMs ?? 5;
  const max = opts.maxDelayMs ?? 60_000;
  const queue: K[] = [];
  let head = 0;
  const dirty = new Set<K>();
  const processing = new Set<K>();
  const failures = new Map<K, number>();
  const timers = new Map<K, NodeJS.Timeout>();
  const waiters: Array<(k: K | undefined) => void> = [];
  let shutting = false;

  function push(item: K): void {
    const w = waiters.shift();
    if (w) { processing.add(item); dirty.delete(item); w(item); return; }
    queue.push(item);
  }

  const q: WorkQueue<K> = {
    add(item) {
      if (shutting || dirty.has(item)) return;
      dirty.add(item);
      if (processing.has(item)) return;
      push(item);
    },
    addAfter(item, delayMs) {
      if (shutting) return;
      if (delayMs <= 0) { q.add(item); return; }
      if (timers.has(item)) return; // an earlier pending add wins (it fires first)
      const t = setTimeout(() => { timers.delete(item); q.add(item); }, delayMs);
      t.unref?.();
      timers.set(item, t);
    },
    addRateLimited(item) {
      const n = failures.get(item) ?? 0;
      failures.set(item, n + 1);
      q.addAfter(item, Math.min(max, base * 2 ** n));
    },
    forget: (item) => { failures.delete(item); },
    numRequeues: (item) => failures.get(item) ?? 0,
    get() {
      if (head < queue.length) {
        const item = queue[head++]!;
        if (head > 1024 && head * 2 > queue.length) { queue.splice(0, head); head = 0; }
        processing.add(item);
        dirty.delete(item);
        return Promise.resolve(item);
      }
      if (shutting) return Promise.resolve(undefined);
      return new Promise((r) => waiters.push(r));
    },
    done(item) {
      processing.delete(item);
      if (dirty.has(item)) push(item);
    },
    len: () => queue.length - head,
    shutDown() {
      shutting = true;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      for (const w of waiters.splice(0)) w(undefined);
    },
    isShuttingDown: () => shutting,
  };
  return q;
}

/**
 * Runs `workers` loops that take keys and call `sync`. A thrown error requeues the key with
 * back-off (reported to `onError`); success forgets its failure count. Resolves when the queue
 * shuts down and the loops have drained.
 */
/**
 * Returns a function that, when more than `sliceMs` passed since the last yield, waits for one
 * turn of the event loop. In-process clients answer through promises only, so busy workers
 * would otherwise starve every timer (heartbeats, back-offs, delays) in the process.
 */
export function buildYielder(sliceMs = 5): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last < sliceMs) return;
    await new Promise<void>((r) => setImmediate(r));
    last = performance.now();
  };
}

export async function runWorkers<K>(
  queue: WorkQueue<K>,
  workers: number,
  sync: (key: K) => Promise<void>,
  onError?: (key: K, err: unknown) => void,
): Promise<void> {
  const loop = async () => {
    const yieldNow = buildYielder();
    for (;;) {
      await yieldNow();
      const key = await queue.get();
      if (key === undefined) return;
      try {
        await sync(key);
        queue.forget(key);
      } catch (e) {
        onError?.(key, e);
        if (!queue.isShuttingDown()) queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
}
