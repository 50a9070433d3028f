// The scheduling queue: an active FIFO of pods to try (keys, deduplicated), a set of pods that
// found no node (retried when the cluster changes, or after `unschedulableFlushMs`), and a
// back-off for pods whose binding failed.

export interface SchedulingQueue {
  add(key: string): void;
  /** The pod found no fitting node; park it until a cluster change. */
  addUnschedulable(key: string): void;
  addBackoff(key: string, delayMs: number): void;
  /** A node or assigned pod changed: retry every parked pod. */
  moveAllToActive(): void;
  delete(key: string): void;
  pop(): Promise<string | undefined>;
  isUnschedulable(key: string): boolean;
  close(): void;
}

export function buildSchedulingQueue(unschedulableFlushMs: number): SchedulingQueue {
  const active = new Set<string>(); // insertion-ordered FIFO without duplicates
  const parked = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  const waiters: Array<(k: string | undefined) => void> = [];
  let closed = false;
  const flush = setInterval(() => {
    const limit = Date.now() - unschedulableFlushMs;
    for (const [k, t] of parked) if (t <= limit) { parked.delete(k); q.add(k); }
  }, Math.max(10, Math.min(unschedulableFlushMs, 30_000)));
  flush.unref?.();

  const q: SchedulingQueue = {
    add(key) {
      if (closed) return;
      parked.delete(key);
      const w = waiters.shift();
      if (w) w(key); else active.add(key);
    },
    addUnschedulable(key) { if (!closed) parked.set(key, Date.now()); },
    addBackoff(key, delayMs) {
      if (closed || timers.has(key)) return;
      const t = setTimeout(() => { timers.delete(key); q.add(key); }, delayMs);
      t.unref?.();
      timers.set(key, t);
    },
    moveAllToActive() {
      const keys = [...parked.keys()];
      parked.clear();
      for (const k of keys) q.add(k);
    },
    delete(key) {
      active.delete(key);
      parked.delete(key);
      clearTimeout(timers.get(key));
      timers.delete(key);
    },
    pop() {
      const first = active.values().next();
      if (!first.done) { active.delete(first.value); return Promise.resolve(first.value); }
      if (closed) return Promise.resolve(undefined);
      return new Promise((r) => waiters.push(r));
    },
    isUnschedulable: (key) => parked.has(key),
    close() {
      closed = true;
      clearInterval(flush);
      for (const t of timers.values()) clearTimeout(t);
      for (const w of waiters.splice(0)) w(undefined);
    },
  };
  return q;
}
