// A container's exit: it is terminated with its exit code (reason Completed for 0, Error
// otherwise; a signal is 128 + its number), and what comes next follows the restart policy as
// upstream's kubelet decides it — a sidecar restarts until the app containers are done, a
// completed init container lets the next start, a failed one restarts with back-off unless the
// policy is Never, an app container restarts per restartPolicy. While it waits to restart it is
// in CrashLoopBackOff with upstream's message.

import { constants as osConstants } from 'node:os';
import type { RuntimeContainerStatus } from '../runtime.js';
import {
  isCurrent, isoNow, stopProbeWorkers, type ContainerRun, type ContainerState, type Sandbox,
} from './pods.js';

/** What follows an exit, in this order. */
export interface ExitAction {
  /** A completed init container: ready (it gates the next). */
  readonly markReady: boolean;
  readonly restart: boolean;
  /** The next init container, or the app containers, may start. */
  readonly startNext: boolean;
  /** The sidecars stop if the app containers are done (or an init container failed for good). */
  readonly checkSidecars: boolean;
}

/** Records the run's end on its container (its log closed, its probe workers stopped); returns
 *  the exit code, or undefined when the run was no longer the container's. */
export function recordExit(run: ContainerRun, code: number | null, signal: NodeJS.Signals | null):
  number | undefined {
  const { c } = run;
  if (!isCurrent(run)) return undefined;
  c.child = undefined;
  stopProbeWorkers(c);
  c.readiness = undefined;
  c.liveness = undefined;
  c.startup = undefined;
  const exitCode = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
  c.status = {
    ...c.status, state: 'exited', ready: false, exitCode, finishedAt: isoNow(),
    reason: exitCode === 0 ? 'Completed' : 'Error',
  };
  return exitCode;
}

/** What the restart policy makes of an exit. */
export function exitAction(sb: Sandbox, c: ContainerState, exitCode: number): ExitAction {
  const policy = sb.pod.spec?.restartPolicy ?? 'Always';
  const none = { markReady: false, restart: false, startNext: false, checkSidecars: false };
  // A sidecar is restarted whenever it exits, until the app containers are done.
  if (c.sidecar) return { ...none, restart: !sb.sidecarsStopping };
  if (c.init) {
    // Completed: the next one (or the app containers) starts. Failed: restarted with back-off
    // unless the policy is Never (the pod then fails); Always restarts it as OnFailure.
    if (exitCode === 0) return { ...none, markReady: true, startNext: true };
    return policy !== 'Never' ? { ...none, restart: true } : { ...none, checkSidecars: true };
  }
  return { ...none, restart: policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0),
    checkSidecars: true };
}

/** The status of a container waiting `waitMs` to restart: the last run in lastTerminated,
 *  CrashLoopBackOff with upstream's message while there is a back-off. */
export function restartWaitStatus(sb: Sandbox, name: string, last: RuntimeContainerStatus, waitMs: number,
  scale: number): RuntimeContainerStatus {
  return {
    ...last, state: 'waiting', ready: false,
    lastTerminated: {
      exitCode: last.exitCode ?? 0, reason: last.reason ?? 'Error', startedAt: last.startedAt,
      finishedAt: last.finishedAt, containerID: last.containerID,
    },
    reason: waitMs > 0 ? 'CrashLoopBackOff' : 'ContainerCreating',
    message: waitMs > 0 ? `back-off ${Math.round(waitMs / 1000 / scale)}s restarting failed ` +
      `container=${name} pod=${sb.pod.metadata.name}_${sb.pod.metadata.namespace ?? 'default'}` +
      `(${sb.uid})` : undefined,
  };
}
