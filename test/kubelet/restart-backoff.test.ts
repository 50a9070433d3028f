import { describe, expect, it } from 'vitest';
import { buildRestartBackoff } from '../../src/kubelet/backoff.js';
import { buildPodStatus, podPhase } from '../../src/kubelet/pod-status.js';
import type { RuntimeContainerStatus } from '../../src/kubelet/runtime.js';

describe('container restart back-off', () => {
  it('restarts at once the first time, then waits 10 s doubling up to 300 s', () => {
    let t = 0;
    const b = buildRestartBackoff(1, () => t);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      waits.push(b.next(t)); // each container exits as soon as it is restarted
      t += waits[waits.length - 1]!;
    }
    expect(waits).toEqual([0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('counts the wait from the exit, and forgets the back-off after 10 quiet minutes', () => {
    let t = 0;
    const b = buildRestartBackoff(1, () => t);
    expect(b.next(0)).toBe(0);
    t = 4_000;
    expect(b.next(4_000)).toBe(10_000);
    t = 30_000; // ran 16 s, exited at 30 s: back-off 20 s from the exit
    expect(b.next(30_000)).toBe(20_000);
    t = 30_000 + 700_000;
    expect(b.next(t)).toBe(0);
  });

  it('scales with the time scale', () => {
    let t = 0;
    const b = buildRestartBackoff(0.1, () => t);
    b.next(0);
    expect(b.next(0)).toBe(1_000);
  });
});

describe('pod phase with restarting containers', () => {
  const exited = (exitCode: number): RuntimeContainerStatus => ({
    name: 'c', state: 'exited', exitCode, ready: false, restartCount: 0,
  });
  const backingOff: RuntimeContainerStatus = {
    name: 'c', state: 'waiting', reason: 'CrashLoopBackOff', ready: false, restartCount: 2,
    message: 'back-off 20s', lastTerminated: { exitCode: 1, reason: 'Error' },
  };
  const pod = (restartPolicy: 'Always' | 'OnFailure' | 'Never') =>
    ({ metadata: { name: 'p' }, spec: { restartPolicy, containers: [{ name: 'c', image: 'x' }] } });

  it('a container in CrashLoopBackOff leaves the pod Running, not Pending', () => {
    expect(podPhase(pod('Always'), [backingOff])).toBe('Running');
    expect(podPhase(pod('OnFailure'), [backingOff])).toBe('Running');
  });

  it('exits end the pod per restartPolicy', () => {
    expect(podPhase(pod('OnFailure'), [exited(0)])).toBe('Succeeded');
    expect(podPhase(pod('Never'), [exited(3)])).toBe('Failed');
    expect(podPhase(pod('Never'), [exited(0)])).toBe('Succeeded');
  });

  it('publishes the waiting reason, message and the last termination', () => {
    const s = buildPodStatus(pod('Always'), { uid: 'u', podIPs: ['10.0.0.2'], containers: [backingOff] },
      '172.18.0.2', '2026-01-01T00:00:00Z');
    expect(s.containerStatuses![0]).toMatchObject({
      restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 20s' } },
      lastState: { terminated: { exitCode: 1, reason: 'Error' } },
    });
  });
});
