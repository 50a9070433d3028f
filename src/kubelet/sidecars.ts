// Sidecar containers (KEP-753, GA in v1.33): init containers with `restartPolicy: Always`. They
// start in spec order among the init containers, and the next init container waits until the
// sidecar has *started* (running, its startupProbe passed and postStart done); they then run
// beside the app containers, are restarted whenever they exit (whatever the pod's
// restartPolicy), take probes and lifecycle hooks, do not keep a Job's pod from completing (once
// every app container has finished for good, the kubelet stops them) and are stopped after the
// app containers, in reverse spec order. Their statuses stay in initContainerStatuses, with
// `started` and `ready` as for app containers. What both runtimes share lives here.

import type { Container, Pod } from '../api/types.js';
import type { RuntimeContainerStatus } from './runtime.js';

export function isSidecar(spec: Pick<Container, 'restartPolicy'> | undefined): boolean {
  return spec?.restartPolicy === 'Always';
}

/** Whether init container `name` of the pod is a sidecar. */
export function isSidecarOf(pod: Pod, name: string): boolean {
  return isSidecar(pod.spec?.initContainers?.find((c) => c.name === name));
}

/** What an init container is for the start sequence (upstream computeInitContainerActions). */
export interface InitProgress {
  readonly name: string;
  readonly sidecar: boolean;
  readonly state: RuntimeContainerStatus['state'];
  readonly exitCode?: number;
  readonly started?: boolean;
  /** A start or a restart is under way (back-off timer, program being resolved). */
  readonly pending: boolean;
  /** It has run at least once (a sidecar that exited is restarted by its own exit handler). */
  readonly ran: boolean;
}

/**
 * The next step of a pod's start: start one init container, wait (one is running, starting
 * or backing off), or start the app containers (every regular init container completed and
 * every sidecar started).
 */
export function nextInitStep(inits: readonly InitProgress[]): { start: string } | 'wait' | 'apps' {
  for (const c of inits) {
    if (c.sidecar) {
      if (c.state === 'running' && c.started) continue;
      if (c.state === 'running' || c.pending || c.ran) return 'wait';
      return { start: c.name };
    }
    if (c.state === 'exited' && (c.exitCode ?? 0) === 0) continue;
    if (c.state === 'running' || c.pending || c.ran) return 'wait';
    return { start: c.name };
  }
  return 'apps';
}

/**
 * Whether the pod's app containers have all finished for good, so its sidecars are to stop
 * (upstream: the pod is done once its regular containers are; sidecars never keep a Job's pod
 * running). Never under restartPolicy Always.
 */
export function appsFinished(pod: Pod, apps: readonly RuntimeContainerStatus[], restarting: (name: string) => boolean): boolean {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Always' || apps.length === 0) return false;
  return apps.every((c) => c.state === 'exited' && !restarting(c.name)
    && (policy === 'Never' || (c.exitCode ?? 0) === 0));
}
