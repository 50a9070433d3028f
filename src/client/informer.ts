// Shared informer over any `Client`: list, then watch from the list's resourceVersion; on a
// watch that ends or reports 410 Gone it re-watches from the last seen resourceVersion, and
// relists (diffing against the cache) when that version has expired. Handlers see add/update/
// delete in the order the API server produced them; a periodic resync replays every cached
// object as an update. An informer factory shares one informer per resource between components
// of one process, as upstream's SharedInformerFactory.

import { isKdpError } from '../errors.js';
import {
  buildObjectCache, objectKey, type IndexFunc, type MutableObjectCache, type ObjectCache,
} from './cache.js';
import type { Client, KubeObject, ResourceRef, WatchEvent, WatchHandle } from './types.js';

export interface EventHandlers<T extends KubeObject> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** `obj` is the last known state (the DELETED event's object, or the cached one on relist). */
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject> {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Replays all cached objects as updates every so often; 0 (default) turns it off. */
  readonly resyncMs?: number;
  readonly indexers?: Record<string, IndexFunc<T>>;
  /** Delay before retrying a failed list or watch (doubles up to 30 s). Default 100 ms. */
  readonly retryMs?: number;
  /** Page size for the initial list; default 0 (no paging). */
  readonly pageSize?: number;
  /** Called with non-fatal errors (failed list/watch); default ignores them. */
  readonly onError?: (err: unknown) => void;
}

export interface Informer<T extends KubeObject> {
  readonly cache: ObjectCache<T>;
  /** Adds a secondary index to the cache (shared informers gather indexes from every user). */
  addIndexer(name: string, fn: IndexFunc<T>): void;
  /** Returns the handler's removal (a component that stops leaves a shared informer). */
  addEventHandler(h: EventHandlers<T>): () => void;
  /** Idempotent; the first list is delivered as adds. */
  start(): void;
  stop(): void;
  hasSynced(): boolean;
  /** Resolves once the first list has been delivered to the cache and handlers. */
  waitForSync(): Promise<void>;
  /** The resourceVersion the informer is watching from. */
  lastResourceVersion(): string;
}

export function buildInformer<T extends KubeObject>(
  client: Client,
  ref: ResourceRef,
  opts: InformerOptions<T> = {},
): Informer<T> {
  const cache: MutableObjectCache<T> = buildObjectCache<T>(opts.indexers ?? {});
  const handlers: EventHandlers<T>[] = [];
  const baseRetry = opts.retryMs ?? 100;
  let retry = baseRetry;
  let running = false;
  let synced = false;
  let rv = '';
  let watch: WatchHandle | undefined;
  let timer: NodeJS.Timeout | undefined;
  let resyncTimer: NodeJS.Timeout | undefined;
  let generation = 0; // bumps on every (re)list/stop so late callbacks are ignored
  const syncWaiters: Array<() => void> = [];

  const emitAdd = (o: T) => { for (const h of handlers) safe(() => h.onAdd?.(o)); };
  const emitUpdate = (a: T, b: T) => { for (const h of handlers) safe(() => h.onUpdate?.(a, b)); };
  const emitDelete = (o: T) => { for (const h of handlers) safe(() => h.onDelete?.(o)); };
  const safe = (fn: () => void) => {
    try { fn(); } catch (e) { opts.onError?.(e); }
  };

  function schedule(fn: () => void): void {
    clearTimeout(timer);
    timer = setTimeout(fn, retry);
    timer.unref?.();
    retry = Math.min(retry * 2, 30_000);
  }

  async function listAll(): Promise<{ items: T[]; rv: string }> {
    const items: T[] = [];
    let cont: string | undefined;
    let listRv = '';
    do {
      const page = await client.list<T>(ref, {
        labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector,
        limit: opts.pageSize || undefined, continue: cont,
      });
      items.push(...page.items);
      listRv = page.metadata.resourceVersion;
      cont = page.metadata.continue || undefined;
    } while (cont);
    return { items, rv: listRv };
  }

  async function relist(): Promise<void> {
    const gen = ++generation;
    watch?.stop();
    watch = undefined;
    let res: { items: T[]; rv: string };
    try {
      res = await listAll();
    } catch (e) {
      if (gen !== generation || !running) return;
      opts.onError?.(e);
      schedule(() => void relist());
      return;
    }
    if (gen !== generation || !running) return;
    replace(res.items);
    rv = res.rv;
    if (!synced) {
      synced = true;
      for (const w of syncWaiters.splice(0)) w();
    }
    startWatch(gen);
  }

  function replace(items: T[]): void {
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const prev = cache.upsert(obj);
      if (!prev) emitAdd(obj);
      else if (prev.metadata.resourceVersion !== obj.metadata.resourceVersion) {
        emitUpdate(prev, obj);
      }
    }
    for (const key of cache.keys()) {
      if (seen.has(key)) continue;
      const prev = cache.remove(key);
      if (prev) emitDelete(prev);
    }
  }

  function startWatch(gen: number): void {
    try {
      watch = client.watch<T>(ref, {
        resourceVersion: rv, allowWatchBookmarks: true,
        labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector,
      }, {
        onEvent: (ev) => { if (gen === generation) onEvent(ev, gen); },
        onClose: (err) => { if (gen === generation && running) onWatchClosed(err); },
      });
    } catch (e) {
      onWatchClosed(e);
    }
  }

  function onWatchClosed(err: unknown): void {
    watch = undefined;
    if (isKdpError(err, 'KDP_GONE')) { schedule(() => void relist()); return; }
    if (err) opts.onError?.(err);
    const gen = generation;
    schedule(() => { if (gen === generation && running) startWatch(gen); });
  }

  function onEvent(ev: WatchEvent<T>, gen: number): void {
    retry = baseRetry;
    const obj = ev.object;
    const evRv = obj?.metadata?.resourceVersion;
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const prev = cache.upsert(obj);
        if (prev) emitUpdate(prev, obj); else emitAdd(obj);
        break;
      }
      case 'DELETED': {
        const prev = cache.remove(objectKey(obj));
        emitDelete(prev ? { ...obj } : obj);
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR': {
        // A Status: 410 Expired/Gone means our resourceVersion is too old; anything else, retry.
        const code = (obj as unknown as { code?: number }).code;
        watch?.stop();
        watch = undefined;
        if (code === 410) schedule(() => void relist());
        else schedule(() => { if (gen === generation && running) startWatch(gen); });
        return;
      }
    }
    if (evRv) rv = evRv;
  }

  function startResync(): void {
    if (!opts.resyncMs) return;
    resyncTimer = setInterval(() => {
      if (!synced) return;
      for (const o of cache.list()) emitUpdate(o, o);
    }, opts.resyncMs);
    resyncTimer.unref?.();
  }

  return {
    cache,
    addIndexer: (name, fn) => cache.addIndexer(name, fn),
    addEventHandler(h) {
      handlers.push(h);
      // A late handler sees the current contents as adds, as upstream does.
      if (synced) for (const o of cache.list()) safe(() => h.onAdd?.(o));
      return () => {
        const i = handlers.indexOf(h);
        if (i >= 0) handlers.splice(i, 1);
      };
    },
    start() {
      if (running) return;
      running = true;
      startResync();
      void relist();
    },
    stop() {
      running = false;
      generation++;
      watch?.stop();
      watch = undefined;
      clearTimeout(timer);
      clearInterval(resyncTimer);
    },
    hasSynced: () => synced,
    waitForSync: () => synced ? Promise.resolve() : new Promise((r) => syncWaiters.push(r)),
    lastResourceVersion: () => rv,
  };
}

/** One informer per (resource, namespace, selectors), shared by the components of a process. */
export interface InformerFactory {
  informerFor<T extends KubeObject>(ref: ResourceRef, opts?: InformerOptions<T>): Informer<T>;
  /** Starts every informer made so far (and any made later). */
  start(): void;
  stop(): void;
  waitForSync(): Promise<void>;
}

export function buildInformerFactory(
  client: Client,
  defaults: Pick<InformerOptions<KubeObject>, 'resyncMs' | 'retryMs' | 'onError'> = {},
): InformerFactory {
  const informers = new Map<string, Informer<KubeObject>>();
  let started = false;
  return {
    informerFor<T extends KubeObject>(ref: ResourceRef, opts: InformerOptions<T> = {}) {
      const key = [ref.group, ref.version, ref.resource, ref.namespace ?? '',
        opts.labelSelector ?? '', opts.fieldSelector ?? ''].join('|');
      let inf = informers.get(key) as Informer<T> | undefined;
      if (!inf) {
        inf = buildInformer<T>(client, ref, { ...defaults, ...opts } as InformerOptions<T>);
        informers.set(key, inf as unknown as Informer<KubeObject>);
        if (started) inf.start();
      } else {
        for (const [name, fn] of Object.entries(opts.indexers ?? {})) inf.addIndexer(name, fn);
      }
      return inf;
    },
    start() {
      started = true;
      for (const i of informers.values()) i.start();
    },
    stop() {
      started = false;
      for (const i of informers.values()) i.stop();
    },
    async waitForSync() {
      await Promise.all([...informers.values()].map((i) => i.waitForSync()));
    },
  };
}
