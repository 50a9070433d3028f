// Watch: store events → Kubernetes watch events, filtered by selectors. With resourceVersion
// '0' or absent the current state comes first as synthetic ADDED events; from a given version
// only later changes. An object that stops matching the selectors is sent as DELETED, one that
// starts matching as ADDED. A compacted version ends the watch with an ERROR 410 Expired event.

import { isKdpError, kdpError } from '../../errors.js';
import type { KubeObject, WatchEvent, WatchHandle, WatchOptions } from '../../client/types.js';
import type { KeyValue, StoreEvent, Watcher } from '../../store/types.js';
import type { ServedResource } from '../resource-types.js';
import { groupVersion } from '../resource-types.js';
import { statusFromError } from '../status.js';
import { decodeObject } from './codec.js';
import type { ServiceDeps } from './deps.js';
import { badRequest } from './errors.js';
import { collectionPrefix } from './keys.js';
import { buildFilter } from './read.js';

export interface WatchSink {
  onEvent(ev: WatchEvent): void;
  /** The watch ended from the server side (after an ERROR event, or store close). */
  onClose(err?: Error): void;
}

export interface ServiceWatchOptions extends WatchOptions {
  readonly timeoutSeconds?: number;
  /**
   * The consumer never mutates event objects (the HTTP encoder): objects decoded from one
   * store event are then shared by every such watcher instead of decoded per watcher.
   */
  readonly readOnly?: boolean;
}

type Decode = (kv: KeyValue) => KubeObject;

/** A decoder that reuses objects decoded from the same stored value (read-only consumers). */
export function buildSharedDecoder(): Decode {
  const cache = new WeakMap<KeyValue, KubeObject>();
  return (kv) => {
    let o = cache.get(kv);
    if (!o) { o = decodeObject(kv); cache.set(kv, o); }
    return o;
  };
}

const ALL = (): boolean => true;

function translate(ev: StoreEvent, match: (o: KubeObject) => boolean, decode: Decode):
  WatchEvent | undefined {
  if (ev.type === 'delete') {
    const o = decode(ev.kv);
    return match(o) ? { type: 'DELETED', object: o } : undefined;
  }
  const cur = decode(ev.kv);
  const now = match(cur);
  // Without a selector every object matches: the previous value need not be decoded.
  const before = !ev.created && !!ev.prevKv && (match === ALL || match(decode(ev.prevKv)));
  if (now && before) return { type: 'MODIFIED', object: cur };
  if (now) return { type: 'ADDED', object: cur };
  if (before) return { type: 'DELETED', object: cur };
  return undefined;
}

function expired(rv: string, current: number): WatchEvent {
  const err = kdpError('KDP_GONE', `too old resource version: ${rv} (${current})`);
  return { type: 'ERROR', object: statusFromError(err) as unknown as KubeObject };
}

/**
 * Starts a watch. Synchronous failures (bad selector, bad resourceVersion) throw; a compacted
 * version is reported as an ERROR event followed by onClose, as the real watch cache does.
 */
export async function startWatch(
  deps: ServiceDeps, r: ServedResource, namespace: string | undefined,
  opts: ServiceWatchOptions, sink: WatchSink, shared?: Decode,
): Promise<WatchHandle> {
  const decode = opts.readOnly && shared ? shared : decodeObject;
  const filter = buildFilter(deps, r, opts) ?? ALL;
  const prefix = collectionPrefix(r, namespace);
  const rvText = opts.resourceVersion ?? '';
  if (rvText !== '' && !/^\d+$/.test(rvText)) {
    throw badRequest(`invalid resource version: ${rvText}`);
  }
  let from: number;
  const initial: KubeObject[] = [];
  if (rvText === '' || rvText === '0') {
    const page = await deps.store.list(prefix);
    from = page.revision;
    for (const kv of page.items) {
      const o = decodeObject(kv);
      if (filter(o)) initial.push(o);
    }
  } else {
    from = Number(rvText);
  }
  let stopped = false;
  let watcher: Watcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let bookmarks: NodeJS.Timeout | undefined;
  let lastRv = from;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    watcher?.stop();
    if (timer) clearTimeout(timer);
    if (bookmarks) clearInterval(bookmarks);
  };
  const end = (err?: Error) => {
    if (stopped) return;
    stop();
    sink.onClose(err);
  };
  for (const o of initial) sink.onEvent({ type: 'ADDED', object: o });
  try {
    watcher = deps.store.watch(prefix, from, {
      onEvents: (evs) => {
        for (const ev of evs) {
          if (stopped) return;
          lastRv = ev.kv.modRevision;
          const out = translate(ev, filter, decode);
          if (out) sink.onEvent(out);
        }
      },
      onClose: (err) => {
        // A watcher the store dropped (too far behind) is told to relist, as upstream does.
        if (isKdpError(err, 'KDP_GONE') && !stopped) {
          sink.onEvent({ type: 'ERROR', object: statusFromError(err) as unknown as KubeObject });
        }
        end(err);
      },
    });
  } catch (e) {
    if (!isKdpError(e, 'KDP_GONE')) throw e;
    sink.onEvent(expired(rvText, deps.store.currentRevision()));
    queueMicrotask(() => sink.onClose());
    stopped = true;
    return { stop };
  }
  if (opts.timeoutSeconds && opts.timeoutSeconds > 0) {
    timer = setTimeout(() => end(), opts.timeoutSeconds * 1000);
  }
  if (opts.allowWatchBookmarks) {
    bookmarks = setInterval(() => {
      const object = { kind: r.kind, apiVersion: groupVersion(r),
        metadata: { resourceVersion: String(lastRv) } } as KubeObject;
      sink.onEvent({ type: 'BOOKMARK', object });
    }, deps.bookmarkIntervalMs);
  }
  return { stop };
}
