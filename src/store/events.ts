// What the store keeps in memory per key and per revision (values in value-codec's packed
// form), and building the event of one write from the key's previous value. Used by the write
// path and by WAL replay, so a replayed store holds exactly what the live one did.

/** A KeyValue as held in the index and the history ring: `packed` is ValueCodec's form. */
export interface StoredKV {
  readonly key: string;
  readonly packed: string;
  readonly createRevision: number;
  readonly modRevision: number;
  readonly version: number;
}

/** A StoreEvent over StoredKVs (see types.ts for the meaning of each field). */
export interface StoredEvent {
  readonly type: 'put' | 'delete';
  readonly kv: StoredKV;
  readonly prevKv?: StoredKV;
  readonly created: boolean;
}

export function putEvent(
  prev: StoredKV | undefined, key: string, packed: string, revision: number,
): StoredEvent {
  const kv: StoredKV = {
    key,
    packed,
    createRevision: prev ? prev.createRevision : revision,
    modRevision: revision,
    version: prev ? prev.version + 1 : 1,
  };
  if (!prev) return { type: 'put', kv, created: true };
  return { type: 'put', kv, prevKv: prev, created: false };
}

export function deleteEvent(prev: StoredKV, revision: number): StoredEvent {
  return { type: 'delete', kv: { ...prev, modRevision: revision }, prevKv: prev, created: false };
}
