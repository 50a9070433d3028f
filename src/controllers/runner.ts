// Glue for queue-driven controllers: a work queue, N workers calling `sync(key)`, and start/stop.

import { buildWorkQueue, runWorkers, type WorkQueue } from '../client/workqueue.js';
import type { Controller } from './util.js';

export interface QueueController extends Controller {
  readonly queue: WorkQueue<string>;
}

export function buildQueueController(
  name: string,
  workers: number,
  sync: (key: string) => Promise<void>,
  hooks: { onStart?(): void; onStop?(): void; onError?(key: string, e: unknown): void } = {},
): QueueController {
  let queue = buildWorkQueue<string>({ baseDelayMs: 5, maxDelayMs: 30_000 });
  let started = false;
  const c: QueueController = {
    name,
    get queue() { return queue; },
    start() {
      if (started) return;
      started = true;
      if (queue.isShuttingDown()) queue = buildWorkQueue<string>();
      void runWorkers(queue, workers, sync, hooks.onError);
      hooks.onStart?.();
    },
    stop() {
      started = false;
      queue.shutDown();
      hooks.onStop?.();
    },
  };
  return c;
}
