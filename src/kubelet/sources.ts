// Where a node agent gets its pods and its Node from. Standalone, each agent runs its own
// informers (pods with `spec.nodeName=<node>`, the Node by `metadata.name`), as a real kubelet
// does. In-process with many virtual nodes, one shared informer per resource feeds every agent
// through a dispatcher that routes events by node name (no per-node watch fan-out).

import type { Node, Pod } from '../api/types.js';
import { objectKey } from '../client/cache.js';
import { buildInformer, type EventHandlers, type Informer } from '../client/informer.js';
import type { Client, KubeObject } from '../client/types.js';
import { MIRROR_ANNOTATION } from './static-pods.js';

export interface RoutedSource<T extends KubeObject> {
  subscribe(nodeName: string, h: EventHandlers<T>): () => void;
  get(key: string): T | undefined;
  /** Objects routed to `nodeName`. */
  list(nodeName: string): T[];
  waitForSync(): Promise<void>;
}

export interface NodeAgentSources {
  readonly pods: RoutedSource<Pod>;
  readonly nodes: RoutedSource<Node>;
  start(): void;
  stop(): void;
}

const POD_NODE_INDEX = 'kubeletNodeName';

function route<T extends KubeObject>(
  inf: Informer<T>, indexName: string, routeOf: (o: T) => string | undefined,
): RoutedSource<T> {
  const subs = new Map<string, Set<EventHandlers<T>>>();
  inf.addIndexer(indexName, (o) => { const r = routeOf(o); return r ? [r] : []; });
  const each = (o: T, fn: (h: EventHandlers<T>) => void) => {
    const r = routeOf(o);
    if (r) for (const h of subs.get(r) ?? []) fn(h);
  };
  inf.addEventHandler({
    onAdd: (o) => each(o, (h) => h.onAdd?.(o)),
    onUpdate: (a, b) => each(b, (h) => h.onUpdate?.(a, b)),
    onDelete: (o) => each(o, (h) => h.onDelete?.(o)),
  });
  return {
    subscribe(nodeName, h) {
      let set = subs.get(nodeName);
      if (!set) subs.set(nodeName, (set = new Set()));
      set.add(h);
      return () => { set!.delete(h); };
    },
    get: (key) => inf.cache.get(key),
    list: (nodeName) => inf.cache.byIndex(indexName, nodeName),
    waitForSync: () => inf.waitForSync(),
  };
}

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

function sourcesFrom(podInf: Informer<Pod>, nodeInf: Informer<Node>, own: boolean) {
  // Mirror pods stand for static pods the kubelet runs from manifests: never run from the API.
  const pods = route(podInf, POD_NODE_INDEX,
    (p) => (p.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined ? undefined : p.spec?.nodeName || undefined));
  const nodes = route(nodeInf, 'kubeletNodeSelf', (n) => n.metadata.name);
  return {
    pods, nodes,
    start() { if (own) { podInf.start(); nodeInf.start(); } },
    stop() { if (own) { podInf.stop(); nodeInf.stop(); } },
  };
}

/** A standalone agent's own informers, filtered server-side to its node. */
export function buildOwnSources(client: Client, nodeName: string): NodeAgentSources {
  const podInf = buildInformer<Pod>(client, PODS, { fieldSelector: `spec.nodeName=${nodeName}` });
  const nodeInf = buildInformer<Node>(client, NODES,
    { fieldSelector: `metadata.name=${nodeName}` });
  return sourcesFrom(podInf, nodeInf, true);
}

/** Sources over shared informers (started and stopped by their owner). */
export function buildSharedSources(podInf: Informer<Pod>, nodeInf: Informer<Node>):
  NodeAgentSources {
  return sourcesFrom(podInf, nodeInf, false);
}

export { objectKey };
