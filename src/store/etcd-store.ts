// The StoreBackend on a real etcd v3 cluster (the engine Kubernetes runs on), with the etcd3
// client. Keys are kdp's own (`/registry/<resource>/<ns>/<name>`, as kube-apiserver's) under an
// optional extra prefix; revisions are etcd's; creates, conditional updates and deletes are etcd
// transactions (compare create/mod revision), so concurrent API servers on one etcd agree.
// Watches are etcd watches from `afterRevision + 1` with the previous value; a compacted start
// ends the watch with KDP_GONE (etcd reports it asynchronously, so the error reaches the
// watcher's onClose rather than being thrown). currentRevision() is the newest revision seen on
// any response or on a background watch of the whole prefix.

import { Etcd3, type IOptions } from 'etcd3';
import { kdpError } from '../errors.js';
import { COMPACT_REV_KEY, startCompactor } from './etcd-compactor.js';
import type {
  KeyValue, ListOptions, ListResult, StoreBackend, StoreEvent, StoreStats, Watcher, WatchHandlers,
} from './types.js';

export interface EtcdStoreOptions {
  /** `http(s)://host:port` client URLs. */
  readonly endpoints: readonly string[];
  /** Prefix in etcd before kdp's keys (kube-apiserver's `--etcd-prefix` holds `/registry`
   *  itself; kdp's keys already start with it): default ''. */
  readonly prefix?: string;
  /** PEM client TLS (kube-apiserver's --etcd-cafile / --etcd-certfile / --etcd-keyfile). */
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
  /** Per-request deadline, ms (default 5000). */
  readonly timeoutMs?: number;
  /** `--etcd-compaction-interval`: compact history older than this (etcd-compactor.ts); 0 or
   *  unset: never (the store's owner opts in: kdp's API server does, with upstream's 5 min). */
  readonly compactionIntervalMs?: number;
  /** A failed compaction round (logged by the owner; the next round tries again). */
  readonly onCompactionError?: (e: unknown) => void;
}

interface RawKV { key: Buffer; value: Buffer; create_revision: string; mod_revision: string; version: string }

/** The end of the key range holding every key with `prefix` (etcd's prefix range_end). */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i]! += 1;
      return end;
    }
  }
  return Buffer.from([0]);
}

function unavailable(e: unknown): Error {
  if ((e as { code?: string }).code?.startsWith('KDP_')) return e as Error;
  const msg = (e as Error).message ?? String(e);
  if (/compacted/.test(msg)) return kdpError('KDP_GONE', `etcd: ${msg}`);
  if (/future revision/.test(msg)) return kdpError('KDP_TIMEOUT', `Too large resource version (etcd: ${msg})`);
  if (/too large|larger than max|RESOURCE_EXHAUSTED/.test(msg)) return kdpError('KDP_TOO_LARGE', `etcd: ${msg}`);
  return kdpError('KDP_UNAVAILABLE', `etcd: ${msg}`, {}, e);
}

/**
 * etcd clientv3's default send limit (defaultMaxCallSendMsgSize, which kube-apiserver keeps): a
 * larger request fails in the client, before anything is sent, so it is refused at once rather
 * than after its upload has outlasted the call's deadline.
 */
export const ETCD_MAX_SEND_BYTES = 2 * 1024 * 1024;

function checkSendSize(key: string, value: string): void {
  // A string of L UTF-16 units is at most 3L bytes: short values need no byte count.
  if (value.length <= ETCD_MAX_SEND_BYTES / 3) return;
  const n = Buffer.byteLength(key) + Buffer.byteLength(value);
  if (n > ETCD_MAX_SEND_BYTES) {
    throw kdpError('KDP_TOO_LARGE',
      `etcd: grpc: trying to send message larger than max (${n} vs. ${ETCD_MAX_SEND_BYTES})`);
  }
}

export async function buildEtcdStore(o: EtcdStoreOptions): Promise<StoreBackend> {
  const opts: IOptions = {
    hosts: [...o.endpoints],
    ...(o.tls ? { credentials: { rootCertificate: o.tls.ca, ...(o.tls.cert && o.tls.key
      ? { certChain: o.tls.cert, privateKey: o.tls.key } : {}) } } : {}),
    dialTimeout: o.timeoutMs ?? 5000,
  };
  const client = new Etcd3(opts);
  const kv = client.kv;
  const pfx = o.prefix ?? '';
  const timeout = o.timeoutMs ?? 5000;
  const call = () => ({ deadline: Date.now() + timeout });
  let revision = 1;
  let compacted = 0;
  let keys = 0;
  const seen = (header: { revision: string } | undefined) => {
    const r = Number(header?.revision ?? 0);
    if (r > revision) revision = r;
    return r;
  };
  const toKV = (k: RawKV, modRevision?: number): KeyValue => ({
    key: k.key.toString().slice(pfx.length), value: k.value.toString(),
    createRevision: Number(k.create_revision), modRevision: modRevision ?? Number(k.mod_revision),
    version: Number(k.version),
  });
  const full = (key: string) => Buffer.from(pfx + key);

  const all = pfx ? { key: full(''), range_end: prefixEnd(pfx) } : { key: Buffer.from([0]), range_end: Buffer.from([0]) };
  const first = await kv.range({ ...all, count_only: true }, call())
    .catch((e: unknown) => { throw unavailable(e); });
  seen(first.header);
  keys = Number(first.count);

  // Follows the revision (and key count) as other writers (other API servers) move it.
  const follower = await (pfx ? client.watch().prefix(pfx) : client.watch().inRange({ start: Buffer.from([0]), end: Buffer.from([0]) }))
    .startRevision(String(revision + 1)).create();
  follower.on('data', (res) => {
    seen(res.header);
    for (const ev of res.events) {
      if (ev.type === 'Put' && ev.kv.version === '1') keys++;
      if (ev.type === 'Delete') keys--;
    }
  });
  follower.on('error', () => undefined);

  // compact_rev_key sits outside kdp's prefix, where kube-apiserver keeps it (no prefix on it).
  const compactKey = Buffer.from(COMPACT_REV_KEY);
  const compactor = o.compactionIntervalMs && o.compactionIntervalMs > 0 ? startCompactor({
    async casCompactKey(version, rev) {
      const r = await kv.txn({
        compare: [{ key: compactKey, target: 'Version', result: 'Equal', version: String(version) }],
        success: [{ request_put: { key: compactKey, value: Buffer.from(String(rev)) } }],
        failure: [{ request_range: { key: compactKey } }],
      }, call()).catch((e: unknown) => { throw unavailable(e); });
      const at = seen(r.header);
      if (r.succeeded) return { succeeded: true, version: version + 1, revision: at };
      return { succeeded: false, version: Number(r.responses[0]?.response_range?.kvs?.[0]?.version ?? 0), revision: at };
    },
    async compact(rev) {
      await kv.compact({ revision: String(rev), physical: false }, call()).catch((e: unknown) => {
        if (!/compacted/.test((e as Error).message ?? '')) throw unavailable(e);
      });
      if (rev > compacted) compacted = rev;
    },
  }, o.compactionIntervalMs, o.onCompactionError ?? (() => undefined)) : undefined;

  const notFound = (key: string) => kdpError('KDP_NOT_FOUND', `key ${key} not found`);
  let closed = false;
  const open = () => { if (closed) throw kdpError('KDP_STORE_CLOSED', 'the store is closed'); };
  const checkKey = (key: string) => { if (!key) throw kdpError('KDP_BAD_REQUEST', 'empty key'); };
  /** The last write issued per key: writes to one key go to etcd in call order, as the
   *  embedded store commits them (settled() waits for it). */
  const lastWrite = new Map<string, Promise<unknown>>();
  const track = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const before = lastWrite.get(key) ?? Promise.resolve();
    const p = before.then(fn, fn);
    const settled = p.then(() => undefined, () => undefined);
    lastWrite.set(key, settled);
    void settled.then(() => { if (lastWrite.get(key) === settled) lastWrite.delete(key); });
    return p;
  };
  const watchers = new Set<(err: Error) => void>();
  const current = async (key: string) => {
    const r = await kv.range({ key: full(key) }, call());
    seen(r.header);
    return r.kvs[0] as RawKV | undefined;
  };

  async function doCreate(key: string, value: string): Promise<KeyValue> {
    const r = await kv.txn({
      compare: [{ key: full(key), target: 'Create', result: 'Equal', create_revision: '0' }],
      success: [{ request_put: { key: full(key), value: Buffer.from(value) } }],
      failure: [],
    }, call()).catch((e: unknown) => { throw unavailable(e); });
    const rev = seen(r.header);
    if (!r.succeeded) throw kdpError('KDP_ALREADY_EXISTS', `key ${key} already exists`);
    return { key, value, createRevision: rev, modRevision: rev, version: 1 };
  }
  async function doUpdate(key: string, value: string, expected?: number): Promise<KeyValue> {
    const compare = [{ key: full(key), target: 'Create' as const, result: 'Greater' as const, create_revision: '0' },
      ...(expected !== undefined ? [{ key: full(key), target: 'Mod' as const, result: 'Equal' as const,
        mod_revision: String(expected) }] : [])];
    const r = await kv.txn({ compare, success: [{ request_put: { key: full(key), value: Buffer.from(value), prev_kv: true } }],
      failure: [{ request_range: { key: full(key) } }] }, call()).catch((e: unknown) => { throw unavailable(e); });
    const rev = seen(r.header);
    if (!r.succeeded) {
      const now = r.responses[0]?.response_range?.kvs?.[0];
      if (!now) throw notFound(key);
      throw kdpError('KDP_CONFLICT', `key ${key} was modified at revision ${now.mod_revision}, not ${expected}`);
    }
    const prev = r.responses[0]?.response_put?.prev_kv as RawKV | undefined;
    return { key, value, createRevision: Number(prev?.create_revision ?? rev), modRevision: rev,
      version: Number(prev?.version ?? 0) + 1 };
  }
  async function doDelete(key: string, expected?: number): Promise<KeyValue> {
    const compare = [{ key: full(key), target: 'Create' as const, result: 'Greater' as const, create_revision: '0' },
      ...(expected !== undefined ? [{ key: full(key), target: 'Mod' as const, result: 'Equal' as const,
        mod_revision: String(expected) }] : [])];
    const r = await kv.txn({ compare, success: [{ request_delete_range: { key: full(key), prev_kv: true } }],
      failure: [{ request_range: { key: full(key) } }] }, call()).catch((e: unknown) => { throw unavailable(e); });
    const rev = seen(r.header);
    if (!r.succeeded) {
      const now = r.responses[0]?.response_range?.kvs?.[0];
      if (!now) throw notFound(key);
      throw kdpError('KDP_CONFLICT', `key ${key} was modified at revision ${now.mod_revision}, not ${expected}`);
    }
    const prev = r.responses[0]?.response_delete_range?.prev_kvs?.[0] as RawKV;
    return toKV(prev, rev);
  }
  const guarded = <T>(key: string, fn: () => Promise<T>, value = ''): Promise<T> => {
    try {
      open();
      checkKey(key);
      checkSendSize(key, value);
    } catch (e) {
      return Promise.reject(e);
    }
    return track(key, fn);
  };

  return {
    async get(key) {
      open();
      const k = await current(key).catch((e: unknown) => { throw unavailable(e); });
      return k ? toKV(k) : undefined;
    },
    async list(prefix, lo: ListOptions = {}) {
      open();
      if (lo.revision !== undefined && lo.revision < compacted) {
        throw kdpError('KDP_GONE', `revision ${lo.revision} has been compacted (${compacted})`);
      }
      const start = lo.startAfter !== undefined ? Buffer.concat([full(lo.startAfter), Buffer.from([0])])
        : pfx + prefix === '' ? Buffer.from([0]) : full(prefix);
      const r = await kv.range({ key: start, range_end: pfx + prefix === '' ? Buffer.from([0]) : prefixEnd(pfx + prefix),
        ...(lo.revision ? { revision: String(lo.revision) } : {}), ...(lo.limit ? { limit: String(lo.limit) } : {}) },
      call()).catch((e: unknown) => { throw unavailable(e); });
      const at = seen(r.header);
      const items = (r.kvs as RawKV[]).map((k) => toKV(k));
      const count = Number(r.count);
      return { items, revision: lo.revision ?? at, more: r.more, remaining: Math.max(0, count - items.length) } as ListResult;
    },
    create: (key, value) => guarded(key, () => doCreate(key, value), value),
    update: (key, value, expected) => guarded(key, () => doUpdate(key, value, expected), value),
    delete: (key, expected) => guarded(key, () => doDelete(key, expected)),
    watch(prefix, afterRevision, handlers: WatchHandlers): Watcher {
      open();
      if (afterRevision < compacted) {
        throw kdpError('KDP_GONE', `revision ${afterRevision} has been compacted (${compacted})`);
      }
      let stopped = false;
      let w: Awaited<ReturnType<ReturnType<typeof client.watch>['create']>> | undefined;
      const close = (err?: Error) => {
        if (stopped) return;
        stopped = true;
        watchers.delete(close);
        void w?.cancel().catch(() => undefined);
        handlers.onClose?.(err);
      };
      watchers.add(close);
      const b = client.watch();
      (pfx + prefix === '' ? b.inRange({ start: Buffer.from([0]), end: Buffer.from([0]) }) : b.prefix(pfx + prefix))
        .startRevision(String(afterRevision + 1)).withPreviousKV().create()
        .then((watcher) => {
          w = watcher;
          if (stopped) { void watcher.cancel().catch(() => undefined); return; }
          watcher.on('data', (res) => {
            if (stopped) return;
            seen(res.header);
            if (Number(res.compact_revision) > 0) {
              close(kdpError('KDP_GONE', `revision ${afterRevision} has been compacted (${res.compact_revision})`));
              return;
            }
            const evs: StoreEvent[] = res.events.map((ev) => {
              const k = ev.kv as RawKV;
              const prev = ev.prev_kv as RawKV | undefined;
              if (ev.type === 'Delete') {
                const last = prev ? toKV(prev, Number(k.mod_revision)) : { ...toKV(k), value: '' };
                return { type: 'delete', kv: last, ...(prev ? { prevKv: toKV(prev) } : {}), created: false };
              }
              return { type: 'put', kv: toKV(k), ...(prev ? { prevKv: toKV(prev) } : {}), created: k.version === '1' };
            });
            if (!evs.length) return;
            try {
              handlers.onEvents(evs);
            } catch (e) {
              close(e as Error); // a throwing handler ends its own watch only
            }
          });
          watcher.on('error', (e) => close(unavailable(e)));
        }, (e: unknown) => close(unavailable(e)));
      return { stop: () => {
        if (stopped) return;
        stopped = true;
        watchers.delete(close);
        void w?.cancel().catch(() => undefined);
      } };
    },
    currentRevision: () => revision,
    async compact(rev) {
      open();
      await kv.compact({ revision: String(rev), physical: true }, call()).catch((e: unknown) => {
        const msg = (e as Error).message ?? '';
        if (/future revision/.test(msg)) throw kdpError('KDP_BAD_REQUEST', `cannot compact to future revision ${rev}`);
        if (!/compacted/.test(msg)) throw unavailable(e);
      });
      if (rev > compacted) compacted = rev;
    },
    stats: (): StoreStats => ({ revision, compactedRevision: compacted, keys }),
    async settled(key) {
      await lastWrite.get(key);
    },
    async close() {
      if (closed) return;
      closed = true;
      compactor?.stop();
      for (const c of [...watchers]) c(kdpError('KDP_STORE_CLOSED', 'the store is closed'));
      await follower.cancel().catch(() => undefined);
      client.close();
    },
  };
}
