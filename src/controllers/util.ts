// Small shared helpers: pod readiness/activity as upstream's podutil, controller refs,
// timestamps, and a `Controller` shape every controller returns.

import type { OwnerReference, Pod } from '../api/types.js';
import type { KubeObject } from '../client/types.js';

/** What every controller builder returns; informers are started by the manager. */
export interface Controller {
  readonly name: string;
  start(): void;
  stop(): void;
}

/** RFC 3339 without fractions (metav1.Time). */
export function isoNow(now: number = Date.now()): string {
  return new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** metav1.MicroTime (`2024-01-02T03:04:05.123456Z`). */
export function microTime(now: number = Date.now()): string {
  return new Date(now).toISOString().replace(/Z$/, '000Z');
}

export function controllerRef(obj: KubeObject): OwnerReference | undefined {
  return (obj.metadata.ownerReferences ?? []).find((r) => r.controller) as
    OwnerReference | undefined;
}

export function ownerRefTo(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion, kind, name: owner.metadata.name!, uid: owner.metadata.uid!,
    controller: true, blockOwnerDeletion: true,
  };
}

export function podReadyCondition(pod: Pod) {
  return (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
}

export function isPodReady(pod: Pod): boolean {
  return podReadyCondition(pod)?.status === 'True';
}

/** Ready for at least `minReadySeconds` (upstream IsPodAvailable). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  const c = podReadyCondition(pod);
  if (c?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const t = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : 0;
  return t + minReadySeconds * 1000 <= now;
}

export function isPodTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Not terminal and not being deleted (upstream IsPodActive). */
export function isPodActive(pod: Pod): boolean {
  return !isPodTerminal(pod) && !pod.metadata.deletionTimestamp;
}

export function clone<T>(v: T): T {
  return structuredClone(v);
}
