// The in-memory MVCC index: the current StoredKV of every key plus the ordered key set used for
// prefix listing. Past revisions are served by undoing the history ring's newer events on top of
// the current state (see `listAtRevision`), so only one version per key is kept in memory.
import type { StoredEvent, StoredKV } from './events.js';
import { SortedKeys, type KeyPos } from './sorted-keys.js';

export interface Page {
  readonly items: StoredKV[];
  readonly more: boolean;
  readonly remaining: number;
}

export class KeyIndex {
  private readonly map = new Map<string, StoredKV>();
  private readonly keys = new SortedKeys();

  get size(): number {
    return this.map.size;
  }

  get(key: string): StoredKV | undefined {
    return this.map.get(key);
  }

  put(kv: StoredKV): void {
    if (!this.map.has(kv.key)) this.keys.insert(kv.key);
    this.map.set(kv.key, kv);
  }

  remove(key: string): void {
    if (this.map.delete(key)) this.keys.delete(key);
  }

  /** Every StoredKV in key order (a consistent copy of references, for snapshots). */
  values(): StoredKV[] {
    const out: StoredKV[] = [];
    for (const key of this.keys.keysFrom({ c: 0, i: 0 })) out.push(this.map.get(key)!);
    return out;
  }

  /** Keys with `prefix`, strictly after `startAfter`, in order. */
  *range(prefix: string, startAfter?: string): Generator<StoredKV> {
    for (const key of this.keys.keysFrom(this.startPos(prefix, startAfter))) {
      if (!key.startsWith(prefix)) return;
      yield this.map.get(key)!;
    }
  }

  /** One page of the current state; `limit` 0 means no limit. */
  page(prefix: string, startAfter: string | undefined, limit: number): Page {
    const items: StoredKV[] = [];
    let stop: KeyPos | undefined;
    this.keys.scan(this.startPos(prefix, startAfter), (key, c, i) => {
      if (!key.startsWith(prefix)) return false;
      if (limit > 0 && items.length === limit) {
        stop = { c, i };
        return false;
      }
      items.push(this.map.get(key)!);
      return true;
    });
    if (stop === undefined) return { items, more: false, remaining: 0 };
    const end = prefixEnd(prefix);
    const endRank = end === undefined ? this.keys.size : this.keys.rank(this.keys.lowerBound(end));
    const remaining = endRank - this.keys.rank(stop);
    return { items, more: remaining > 0, remaining };
  }

  private startPos(prefix: string, startAfter: string | undefined) {
    return startAfter !== undefined && startAfter >= prefix
      ? this.keys.upperBound(startAfter)
      : this.keys.lowerBound(prefix);
  }
}

/** The smallest string greater than every string starting with `prefix` (undefined: none). */
export function prefixEnd(prefix: string): string | undefined {
  let p = prefix;
  while (p.length > 0) {
    const last = p.charCodeAt(p.length - 1);
    if (last < 0xffff) return p.slice(0, -1) + String.fromCharCode(last + 1);
    p = p.slice(0, -1);
  }
  return undefined;
}

/** The value a key had just before `ev` was applied (null: it did not exist). */
export function stateBefore(ev: StoredEvent): StoredKV | null {
  if (ev.type === 'put' && ev.created) return null;
  return ev.prevKv ?? null;
}

/**
 * Lists `prefix` as of `revision`, given the current index and every event newer than
 * `revision` (newest first). Cost: O(items in range + newer events).
 */
export function listAtRevision(
  index: KeyIndex,
  newerEventsNewestFirst: Iterable<StoredEvent>,
  prefix: string,
  startAfter: string | undefined,
  limit: number,
): Page {
  const overlay = new Map<string, StoredKV | null>();
  for (const ev of newerEventsNewestFirst) {
    const key = ev.kv.key;
    if (!key.startsWith(prefix) || (startAfter !== undefined && key <= startAfter)) continue;
    overlay.set(key, stateBefore(ev));
  }
  const extra = [...overlay.keys()].sort();
  const all: StoredKV[] = [];
  let x = 0;
  const pushOverlay = (key: string) => {
    const kv = overlay.get(key);
    if (kv) all.push(kv);
  };
  for (const kv of index.range(prefix, startAfter)) {
    while (x < extra.length && extra[x]! < kv.key) pushOverlay(extra[x++]!);
    if (overlay.has(kv.key)) continue;
    all.push(kv);
  }
  while (x < extra.length) pushOverlay(extra[x++]!);
  if (limit <= 0 || all.length <= limit) return { items: all, more: false, remaining: 0 };
  return { items: all.slice(0, limit), more: true, remaining: all.length - limit };
}
