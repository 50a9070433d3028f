// Pods' labels as a logging agent tags their lines: remembered by UID from a pod watch, a
// deleted pod's kept too (its files may be read after it is gone) for the last DELETED_KEPT.
// Shared by the cluster's collector (collector.ts) and a joined node's agent (node-log-agent.ts).

import type { Informer } from '../client/informer.js';
import type { KubeObject } from '../client/types.js';

/** Labels of pods seen, kept for this many deleted pods (their logs may be read later). */
const DELETED_KEPT = 10_000;

export interface PodLabelMemory {
  /** The pod's labels (by UID; else the cached pod of that name if it is that UID). */
  labelsOf(namespace: string, name: string, uid: string): Record<string, string> | undefined;
  stop(): void;
}

export function rememberPodLabels(pods: Informer<KubeObject>): PodLabelMemory {
  const labels = new Map<string, Record<string, string>>();
  const deleted: string[] = [];
  const remember = (p: KubeObject) => {
    if (p.metadata.uid) labels.set(p.metadata.uid, { ...(p.metadata.labels ?? {}) });
  };
  const off = pods.addEventHandler({
    onAdd: remember, onUpdate: (_, p) => remember(p),
    onDelete: (p) => {
      remember(p);
      deleted.push(p.metadata.uid ?? '');
      if (deleted.length > DELETED_KEPT) labels.delete(deleted.shift()!);
    },
  });
  return {
    labelsOf(ns, name, uid) {
      const cached = pods.cache.get(`${ns}/${name}`);
      return labels.get(uid) ?? (cached?.metadata.uid === uid ? cached.metadata.labels : undefined);
    },
    stop: off,
  };
}
