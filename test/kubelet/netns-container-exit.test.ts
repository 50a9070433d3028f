// The netns runtime's exit step on its own: what the restart policy makes of an exit (upstream's
// kubelet: sidecars restart until the apps are done, a completed init container gates the next,
// a failed one restarts unless Never, app containers per restartPolicy) and the status of a
// container waiting out its back-off.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { exitAction, restartWaitStatus } from '../../src/kubelet/netns-runtime/container-exit.js';
import type { ContainerState, Sandbox } from '../../src/kubelet/netns-runtime/pods.js';

const sandbox = (restartPolicy?: 'Always' | 'OnFailure' | 'Never', sidecarsStopping = false): Sandbox => ({
  uid: 'u1', pod: { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { restartPolicy, containers: [] } } as Pod,
  netns: 'kdp-t-p-1', net: { podCIDRs: ['10.244.0.0/24'] }, createdAtMs: 0, podIPs: [], containers: new Map(),
  stopping: false, sidecarsStopping,
});
const container = (kind: 'app' | 'init' | 'sidecar'): ContainerState => ({
  status: { name: 'c', state: 'exited', ready: false, restartCount: 0 },
  backoff: { next: () => 0, reset: () => undefined } as never,
  init: kind !== 'app', sidecar: kind === 'sidecar',
});
const none = { markReady: false, restart: false, startNext: false, checkSidecars: false };

describe('what follows a netns container\'s exit', () => {
  it('an app container restarts per restartPolicy, and the sidecars check whether the apps are done', () => {
    expect(exitAction(sandbox(), container('app'), 0)).toEqual({ ...none, restart: true, checkSidecars: true });
    expect(exitAction(sandbox('OnFailure'), container('app'), 0)).toEqual({ ...none, checkSidecars: true });
    expect(exitAction(sandbox('OnFailure'), container('app'), 2)).toEqual({ ...none, restart: true, checkSidecars: true });
    expect(exitAction(sandbox('Never'), container('app'), 2)).toEqual({ ...none, checkSidecars: true });
  });

  it('a completed init container is ready and lets the next start; a failed one restarts unless Never', () => {
    expect(exitAction(sandbox('Never'), container('init'), 0)).toEqual({ ...none, markReady: true, startNext: true });
    expect(exitAction(sandbox('Always'), container('init'), 1)).toEqual({ ...none, restart: true });
    expect(exitAction(sandbox('Never'), container('init'), 1)).toEqual({ ...none, checkSidecars: true });
  });

  it('a sidecar restarts whatever the policy, until the sidecars are stopping', () => {
    expect(exitAction(sandbox('Never'), container('sidecar'), 0)).toEqual({ ...none, restart: true });
    expect(exitAction(sandbox('Never', true), container('sidecar'), 0)).toEqual(none);
  });

  it('a container waiting out its back-off is CrashLoopBackOff with upstream\'s message, its last run kept', () => {
    const last = { name: 'c', state: 'exited' as const, ready: false, restartCount: 2, exitCode: 3, reason: 'Error',
      startedAt: 't0', finishedAt: 't1', containerID: 'kdp://x' };
    expect(restartWaitStatus(sandbox(), 'c', last, 20_000, 1)).toMatchObject({
      state: 'waiting', reason: 'CrashLoopBackOff',
      message: 'back-off 20s restarting failed container=c pod=p_ns(u1)',
      lastTerminated: { exitCode: 3, reason: 'Error', startedAt: 't0', finishedAt: 't1', containerID: 'kdp://x' },
    });
    expect(restartWaitStatus(sandbox(), 'c', last, 0, 1)).toMatchObject({ reason: 'ContainerCreating', message: undefined });
  });
});
