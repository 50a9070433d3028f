// The contract suites run against every StoreBackend implementation.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildEmbeddedStore, buildMemoryStore, type MemoryStoreOptions,
} from '../../src/store/index.js';
import type { StoreBackend, StoreEvent, Watcher } from '../../src/store/types.js';
import { buildEtcdStore } from '../../src/store/etcd-store.js';
import { startLocalEtcd } from '../../src/cluster/etcd-cluster.js';
import { etcdMissing, startEtcd } from '../helpers/etcd.js';

export interface Opened {
  readonly store: StoreBackend;
  readonly cleanup: () => Promise<void>;
}

export interface Backend {
  readonly name: string;
  open(o?: MemoryStoreOptions): Promise<Opened>;
}

export const backends: readonly Backend[] = [
  {
    name: 'memory',
    async open(o) {
      const store = buildMemoryStore(o);
      return { store, cleanup: () => store.close() };
    },
  },
  {
    name: 'embedded',
    async open(o) {
      const dataDir = await tempDir();
      const store = await buildEmbeddedStore({ ...o, dataDir });
      return {
        store,
        cleanup: async () => {
          await store.close();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
  ...(etcdMissing() ? [] : [{
    name: 'etcd',
    async open() {
      // A fresh member per store: revisions start at 1, as the contract says of a new store.
      const etcd = await startEtcd();
      const store = await buildEtcdStore({ endpoints: [etcd.endpoint] });
      return {
        store,
        cleanup: async () => {
          await store.close();
          await etcd.stop();
        },
      };
    },
  }, {
    name: 'etcd, 3 members (TLS)',
    async open() {
      // A fresh local cluster per store, as `kdp up --etcd 3` runs it: Raft between members,
      // TLS to clients; the contract holds across a real quorum, not only one member.
      const root = await tempDir();
      const etcd = await startLocalEtcd(root, 3, () => {});
      const store = await buildEtcdStore({ endpoints: [...etcd.endpoints], tls: etcd.tls });
      return {
        store,
        cleanup: async () => {
          await store.close();
          await etcd.stop();
          await rm(root, { recursive: true, force: true });
        },
      };
    },
  }]),
];

export function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'kdp-store-t-'));
}

/** Records a watch's events and close; `waitFor(n)` resolves once n events arrived. */
export function collect(
  start: (h: { onEvents(e: readonly StoreEvent[]): void; onClose(err?: Error): void }) => Watcher,
) {
  const events: StoreEvent[] = [];
  const batches: number[] = [];
  let closed: { err?: Error } | undefined;
  const waiters: { n: number; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (events.length >= w.n || closed) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const watcher = start({
    onEvents(e) {
      events.push(...e);
      batches.push(e.length);
      check();
    },
    onClose(err) {
      closed = { err };
      check();
    },
  });
  return {
    watcher,
    events,
    batches,
    closed: () => closed,
    waitFor: (n: number) => new Promise<void>((resolve) => {
      waiters.push({ n, resolve });
      check();
    }),
  };
}

/** Lets queued microtasks and immediates run (watch delivery is asynchronous). */
export function settle(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
