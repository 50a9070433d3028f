// Keeps a NodeGraph current from the API server's storage: one list of the pods, then a store
// watch from that revision (upstream feeds its graph from informers). No request lists pods.
// The embedded store delivers watch events before a write's caller resumes, so a pod bound by
// one request is related to its node for the next. If the watch ends (store closed, watcher too
// slow), the graph is rebuilt by a fresh list and watch before the next decision.

import type { StoreBackend, StoreEvent, Watcher } from '../../store/types.js';
import type { KubeObject } from '../../client/types.js';
import { NodeGraph, type NodeRelations, type VertexType } from './node-graph.js';

export interface StoreNodeGraph extends NodeRelations {
  /** Resolves once the graph reflects the store (after the first list, or a rebuild). */
  ready(): Promise<void>;
  /** Stops the watch; later decisions see an empty graph. */
  stop(): void;
}

/** `prefix`: the storage prefix of pods (`/registry/pods/`). */
export function buildStoreNodeGraph(store: StoreBackend, prefix: string): StoreNodeGraph {
  const graph = new NodeGraph();
  let watcher: Watcher | undefined;
  let stopped = false;
  let syncing: Promise<void> | undefined;

  const idOf = (key: string): [string, string] => {
    const rest = key.slice(prefix.length);
    const slash = rest.indexOf('/');
    return slash < 0 ? ['', rest] : [rest.slice(0, slash), rest.slice(slash + 1)];
  };
  const put = (key: string, value: string) => {
    try {
      graph.setPod(JSON.parse(value) as KubeObject);
    } catch {
      graph.deletePod(...idOf(key)); // a value that is not a pod relates nothing
    }
  };
  const apply = (events: readonly StoreEvent[]) => {
    for (const e of events) {
      if (e.type === 'put') put(e.kv.key, e.kv.value);
      else graph.deletePod(...idOf(e.kv.key));
    }
  };

  const sync = async (): Promise<void> => {
    graph.clear();
    const list = await store.list(prefix);
    for (const kv of list.items) put(kv.key, kv.value);
    if (stopped) return;
    watcher = store.watch(prefix, list.revision, {
      onEvents: apply,
      onClose: () => {
        watcher = undefined;
        if (!stopped) syncing = undefined;
      },
    });
  };
  const ready = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (!syncing) {
      const p = sync();
      syncing = p;
      // A failed list is retried by the next decision.
      p.catch(() => { if (syncing === p) syncing = undefined; });
    }
    return syncing;
  };
  void ready().catch(() => undefined);

  return {
    ready,
    hasPath: (node: string, type: VertexType, ns: string, name: string) =>
      graph.hasPath(node, type, ns, name),
    stop() {
      stopped = true;
      watcher?.stop();
      watcher = undefined;
      graph.clear();
    },
  };
}
