// Fan-out of committed events to watchers. Each watcher has a queue flushed in a microtask, so
// a watch's history is delivered after `watch()` returns and live events queue behind it: order
// is the commit order (strictly increasing revisions), with no gap and no duplicate. A watcher
// whose queue grows beyond `queueLimit` events, or whose handler throws, is closed (KDP_GONE for
// overflow, so the client relists).
import { kdpError } from '../errors.js';
import type { StoreEvent, Watcher, WatchHandlers } from './types.js';

class QueuedWatcher implements Watcher {
  private queue: StoreEvent[] = [];
  private scheduled = false;
  private done = false;

  constructor(
    readonly prefix: string,
    private readonly afterRevision: number,
    private readonly handlers: WatchHandlers,
    private readonly queueLimit: number,
    private readonly onDone: (w: QueuedWatcher) => void,
  ) {}

  enqueue(events: readonly StoreEvent[]): void {
    if (this.done) return;
    for (const ev of events) {
      if (ev.kv.modRevision > this.afterRevision && ev.kv.key.startsWith(this.prefix)) {
        this.queue.push(ev);
      }
    }
    if (this.queue.length > this.queueLimit) {
      const msg = `watch on "${this.prefix}" fell more than ${this.queueLimit} events behind`;
      this.close(kdpError('KDP_GONE', msg));
      return;
    }
    if (this.queue.length > 0 && !this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.flush());
    }
  }

  stop(): void {
    if (this.done) return;
    this.done = true;
    this.queue = [];
    this.onDone(this);
  }

  close(err?: Error): void {
    if (this.done) return;
    this.stop();
    this.handlers.onClose?.(err);
  }

  private flush(): void {
    this.scheduled = false;
    if (this.done || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    try {
      this.handlers.onEvents(batch);
    } catch (e) {
      this.close(e instanceof Error ? e : new Error(String(e)));
    }
  }
}

export class WatchHub {
  private readonly watchers = new Set<QueuedWatcher>();

  constructor(private readonly queueLimit: number) {}

  get size(): number {
    return this.watchers.size;
  }

  /** Registers a watcher that first receives `history` (in order), then live events; both are
   *  filtered to `prefix` and revisions above `afterRevision`. */
  add(
    prefix: string, afterRevision: number, history: readonly StoreEvent[], handlers: WatchHandlers,
  ): Watcher {
    const limit = this.queueLimit + history.length;
    const w = new QueuedWatcher(prefix, afterRevision, handlers, limit, (x) => {
      this.watchers.delete(x);
    });
    this.watchers.add(w);
    w.enqueue(history);
    return w;
  }

  /** Delivers committed events (in revision order) to every watcher. */
  publish(events: readonly StoreEvent[]): void {
    for (const w of [...this.watchers]) w.enqueue(events);
  }

  closeAll(err?: Error): void {
    for (const w of [...this.watchers]) w.close(err);
  }
}
