// Building the event of one write from the key's previous value. Used by the write path and by
// WAL replay, so a replayed store holds exactly what the live one did.
import type { KeyValue, StoreEvent } from './types.js';

export function putEvent(
  prev: KeyValue | undefined, key: string, value: string, revision: number,
): StoreEvent {
  const kv: KeyValue = {
    key,
    value,
    createRevision: prev ? prev.createRevision : revision,
    modRevision: revision,
    version: prev ? prev.version + 1 : 1,
  };
  if (!prev) return { type: 'put', kv, created: true };
  return { type: 'put', kv, prevKv: prev, created: false };
}

export function deleteEvent(prev: KeyValue, revision: number): StoreEvent {
  return { type: 'delete', kv: { ...prev, modRevision: revision }, prevKv: prev, created: false };
}
