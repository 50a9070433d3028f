// Pod status with init containers (phase, Initialized, initContainerStatuses) and the probe
// worker as a liveness prober (initial success, exec through the runtime's runner).

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { containerEvents, killingEvents } from '../../src/kubelet/container-events.js';
import { buildPodStatus, podPhase } from '../../src/kubelet/pod-status.js';
import { startReadinessWorker } from '../../src/kubelet/readiness.js';
import type { RuntimeContainerStatus } from '../../src/kubelet/runtime.js';
import { waitFor } from '../helpers/cluster.js';

const pod = (restartPolicy: 'Always' | 'Never'): Pod => ({ apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { restartPolicy, initContainers: [{ name: 'i1', image: 'busybox' }, { name: 'i2', image: 'alpine' }],
    containers: [{ name: 'app', image: 'busybox' }] } } as Pod);
const st = (name: string, s: Partial<RuntimeContainerStatus>): RuntimeContainerStatus =>
  ({ name, state: 'waiting', ready: false, restartCount: 0, ...s });
const app = st('app', { reason: 'PodInitializing' });

describe('pod status with init containers', () => {
  it('Pending until every init container completed; Failed when one failed under Never', () => {
    const done = st('i1', { state: 'exited', exitCode: 0, reason: 'Completed', ready: true });
    expect(podPhase(pod('Always'), [app], [done, st('i2', { state: 'running' })])).toBe('Pending');
    expect(podPhase(pod('Always'), [app], [done, st('i2', { reason: 'CrashLoopBackOff',
      lastTerminated: { exitCode: 1, reason: 'Error' } })])).toBe('Pending');
    expect(podPhase(pod('Never'), [app], [done, st('i2', { state: 'exited', exitCode: 1, reason: 'Error' })]))
      .toBe('Failed');
    expect(podPhase(pod('Never'), [st('app', { state: 'running', ready: true })],
      [done, { ...done, name: 'i2' }])).toBe('Running');
  });

  it('initContainerStatuses with their images, never started; Initialized names the incomplete ones', () => {
    const s = buildPodStatus(pod('Always'), { uid: 'u1', podIPs: ['10.0.0.2'], containers: [app],
      initContainers: [st('i1', { state: 'exited', exitCode: 0, reason: 'Completed', ready: true }),
        st('i2', { state: 'running', startedAt: '2026-01-01T00:00:00Z' })] }, '192.0.2.1', '2026-01-01T00:00:00Z');
    expect(s.initContainerStatuses!.map((c) => [c.name, c.image, c.started, Object.keys(c.state!)[0], c.ready]))
      .toEqual([['i1', 'busybox', false, 'terminated', true], ['i2', 'alpine', false, 'running', false]]);
    expect(s.conditions!.find((c) => c.type === 'Initialized')).toMatchObject({ status: 'False',
      reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [i2]' });
    const plain = buildPodStatus({ ...pod('Always'), spec: { containers: [{ name: 'app' }] } } as Pod,
      { uid: 'u1', podIPs: [], containers: [app] }, '192.0.2.1', '2026-01-01T00:00:00Z');
    expect(plain.initContainerStatuses).toBeUndefined();
    expect(plain.conditions!.find((c) => c.type === 'Initialized')?.status).toBe('True');
  });
});

describe('the probe worker as a liveness prober', () => {
  it('starts alive, flips once after failureThreshold exec failures, reports each failure', async () => {
    const results = [true, false, false];
    const asked: string[][] = [];
    const flips: boolean[] = [];
    const failures: string[] = [];
    const w = startReadinessWorker({
      probe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 1, failureThreshold: 2 },
      container: { name: 'c' }, podIP: () => '10.0.0.5', timeScale: 0.01, initial: true,
      prober: { probe: async () => ({ ok: true }), close: async () => {} },
      exec: async (argv) => {
        asked.push([...argv]);
        const ok = results.shift() ?? false;
        return ok ? { ok } : { ok, message: 'cat: /tmp/healthy: No such file or directory' };
      },
      onChange: (r) => flips.push(r), onFailure: (m) => failures.push(m),
    });
    expect(w.ready).toBe(true);
    await waitFor(() => flips.length > 0 || undefined, 2000, 'flip');
    w.stop();
    expect(flips).toEqual([false]);
    expect(asked[0]).toEqual(['cat', '/tmp/healthy']);
    expect(failures.slice(0, 2)).toEqual(['cat: /tmp/healthy: No such file or directory',
      'cat: /tmp/healthy: No such file or directory']);
  });
});

describe('events of init containers', () => {
  it('Started and Killing name spec.initContainers', () => {
    const rt = { uid: 'u1', podIPs: [], containers: [app],
      initContainers: [st('i1', { state: 'running', startedAt: 't1' })] };
    expect(containerEvents(pod('Always'), undefined, rt).events.map((e) => [e.reason, e.fieldPath]))
      .toEqual([['Pulled', 'spec.initContainers{i1}'], ['Created', 'spec.initContainers{i1}'],
        ['Started', 'spec.initContainers{i1}']]);
    expect(killingEvents(pod('Always'), rt)).toEqual([{ type: 'Normal', reason: 'Killing',
      fieldPath: 'spec.initContainers{i1}', message: 'Stopping container i1' }]);
  });
});
