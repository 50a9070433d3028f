// A small core/v1 Event recorder, as client-go's EventRecorder: events are written in the
// involved object's namespace (`default` for cluster-scoped objects), named
// `<object>.<unique hex>`; a repeat of the same (object, type, reason, message) bumps `count`
// and `lastTimestamp` on the existing Event instead of creating another. Writes are
// fire-and-forget: recording never fails or blocks a controller.

import type { Client, KubeObject } from './types.js';
import type { Event } from '../api/types.js';

export interface EventRecorder {
  /** `fieldPath` names the part of the object (a pod's `spec.containers{web}`, as kubelet's). */
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string,
    fieldPath?: string): void;
  /** Resolves once every write started so far has finished (for tests and shutdown). */
  flush(): Promise<void>;
}

export interface RecorderOptions {
  readonly component: string;
  readonly host?: string;
  readonly now?: () => number;
  /** Set false to drop all events (benchmarks). */
  readonly enabled?: boolean;
}

const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;

export function buildEventRecorder(client: Client, opts: RecorderOptions): EventRecorder {
  const now = opts.now ?? Date.now;
  const seen = new Map<string, { name: string; namespace: string; count: number }>();
  const pending = new Set<Promise<unknown>>();
  let seq = 0;

  function track(p: Promise<unknown>): void {
    const q = p.catch(() => undefined).finally(() => pending.delete(q));
    pending.add(q);
  }

  return {
    event(obj, type, reason, message, fieldPath) {
      if (opts.enabled === false) return;
      const md = obj.metadata;
      const namespace = md.namespace || 'default';
      const key = [obj.kind, namespace, md.name, md.uid, fieldPath, type, reason, message].join('\u0000');
      const ts = new Date(now()).toISOString().replace(/\.\d+Z$/, 'Z');
      const prev = seen.get(key);
      const ref = { ...EVENTS, namespace };
      if (prev) {
        prev.count++;
        track(client.patch(ref, prev.name, 'merge', { count: prev.count, lastTimestamp: ts }));
        return;
      }
      const name = `${md.name}.${(now() * 1000 + (seq++ % 1000)).toString(16)}`;
      seen.set(key, { name, namespace, count: 1 });
      if (seen.size > 4096) seen.delete(seen.keys().next().value!);
      const ev: Event = {
        apiVersion: 'v1', kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          kind: obj.kind, namespace: md.namespace, name: md.name, uid: md.uid,
          apiVersion: obj.apiVersion, resourceVersion: md.resourceVersion,
          ...(fieldPath ? { fieldPath } : {}),
        },
        reason, message, type,
        source: { component: opts.component, ...(opts.host ? { host: opts.host } : {}) },
        firstTimestamp: ts, lastTimestamp: ts, count: 1,
        reportingComponent: opts.component, reportingInstance: opts.host ?? '',
      };
      track(client.create(ref, ev));
    },
    async flush() {
      while (pending.size) await Promise.all([...pending]);
    },
  };
}
