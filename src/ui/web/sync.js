// Each node's kube-proxy mode and last rule sync (from the store's `sync` map, fed by the
// watch stream; the server learns of syncs from the file system's notifications).

/** node name → { mode, syncs: [{family, seq, time}], apply: [...] } */
export function syncOf(store) {
  return store.get('sync');
}
