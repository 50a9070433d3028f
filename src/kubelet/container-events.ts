// The Events a kubelet records about a pod's containers, worked out from successive runtime
// statuses (the kubelet here observes its runtime rather than driving each step, so a start is
// seen as a new `startedAt`). Reasons and messages are upstream's (kuberuntime_container.go,
// image_manager.go): Pulled / Created / Started on each start, BackOff while a container waits in
// CrashLoopBackOff, Killing when the pod is stopped. Images are always "present" in kdp: the
// host's programs are every image's programs.

import type { Pod } from '../api/types.js';
import type { RuntimePodStatus } from './runtime.js';

export interface ContainerEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  /** `spec.containers{name}` or `spec.initContainers{name}`. */
  readonly fieldPath: string;
}

/** What is remembered of a container between two statuses. */
export interface ContainerMark {
  readonly startedAt?: string;
  readonly backOff: boolean;
}

export type PodMarks = ReadonlyMap<string, ContainerMark>;

/** The events between `before` and `now` for `pod`, and the marks to compare the next status to. */
export function containerEvents(pod: Pod, before: PodMarks | undefined, now: RuntimePodStatus):
  { events: ContainerEvent[]; marks: PodMarks } {
  const events: ContainerEvent[] = [];
  const marks = new Map<string, ContainerMark>();
  const specs = new Map<string, { image?: string; path: string }>();
  for (const c of pod.spec?.initContainers ?? []) {
    specs.set(c.name, { image: c.image, path: `spec.initContainers{${c.name}}` });
  }
  for (const c of pod.spec?.containers ?? []) {
    specs.set(c.name, { image: c.image, path: `spec.containers{${c.name}}` });
  }
  for (const c of [...(now.initContainers ?? []), ...now.containers]) {
    const spec = specs.get(c.name);
    const prev = before?.get(c.name);
    const backOff = c.state === 'waiting' && c.reason === 'CrashLoopBackOff';
    marks.set(c.name, { startedAt: c.startedAt, backOff });
    if (!spec) continue;
    const started = c.startedAt !== undefined && c.startedAt !== prev?.startedAt &&
      (c.state === 'running' || c.state === 'exited');
    if (started) {
      events.push(
        { type: 'Normal', reason: 'Pulled', fieldPath: spec.path,
          message: `Container image "${spec.image ?? ''}" already present on machine` },
        { type: 'Normal', reason: 'Created', fieldPath: spec.path, message: `Created container: ${c.name}` },
        { type: 'Normal', reason: 'Started', fieldPath: spec.path, message: `Started container ${c.name}` },
      );
    }
    if (backOff && !prev?.backOff) {
      events.push({ type: 'Warning', reason: 'BackOff', fieldPath: spec.path,
        message: `Back-off restarting failed container ${c.name} in pod ${pod.metadata.name}_` +
          `${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})` });
    }
  }
  return { events, marks };
}

/** `Killing` for each container (init containers too) that runs when the pod is stopped. */
export function killingEvents(pod: Pod, now: RuntimePodStatus | undefined): ContainerEvent[] {
  const running = (l: readonly RuntimePodStatus['containers'][number][] | undefined, kind: string) =>
    (l ?? []).filter((c) => c.state === 'running').map((c) => ({
      type: 'Normal' as const, reason: 'Killing', fieldPath: `spec.${kind}{${c.name}}`,
      message: `Stopping container ${c.name}`,
    }));
  return [...running(now?.initContainers, 'initContainers'), ...running(now?.containers, 'containers')];
}
