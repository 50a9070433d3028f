// Sidecar containers (init containers with restartPolicy Always, KEP-753): API validation as
// upstream's validateInitContainers, the start sequence, pod status (phase, Initialized, Ready,
// started/ready in initContainerStatuses), kubectl's STATUS/READY columns, and the virtual
// runtime running them beside a completing pod's app container.

import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import type { Pod } from '../../src/api/types.js';
import { validate } from '../../src/api/validation/index.js';
import { podPrinter } from '../../src/apiserver/table/core-printers.js';
import type { KubeObject } from '../../src/client/types.js';
import { buildPodStatus, podPhase } from '../../src/kubelet/pod-status.js';
import type { RuntimeContainerStatus } from '../../src/kubelet/runtime.js';
import { buildVirtualRuntime } from '../../src/kubelet/runtime-virtual.js';
import { appsFinished, nextInitStep, type InitProgress } from '../../src/kubelet/sidecars.js';
import { waitFor } from '../helpers/cluster.js';

const NOW = '2026-01-01T00:00:00Z';
const sidecarPod = (restartPolicy: 'Always' | 'Never' = 'Always'): Pod => ({ apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { restartPolicy, initContainers: [{ name: 'side', image: 'envoy', restartPolicy: 'Always' },
    { name: 'setup', image: 'busybox' }], containers: [{ name: 'app', image: 'busybox' }] } } as Pod);
const st = (name: string, s: Partial<RuntimeContainerStatus>): RuntimeContainerStatus =>
  ({ name, state: 'waiting', ready: false, restartCount: 0, ...s });
const running = (name: string, s: Partial<RuntimeContainerStatus> = {}) =>
  st(name, { state: 'running', ready: true, started: true, ...s });
const completed = (name: string) => st(name, { state: 'exited', exitCode: 0, reason: 'Completed', ready: true });

describe('sidecar validation (upstream validateInitContainers, v1.33)', () => {
  const pod = (spec: object) => applyDefaults({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' },
    spec: { containers: [{ name: 'c', image: 'nginx:1' }], ...spec } } as Pod);
  const messages = (p: Pod) => validate(p).map((c) => `${c.field}: ${c.message}`);
  const probe = { exec: { command: ['true'] } };

  it('a sidecar may have probes and lifecycle hooks', () => {
    expect(messages(pod({ initContainers: [{ name: 's', image: 'envoy', restartPolicy: 'Always',
      livenessProbe: probe, readinessProbe: probe, startupProbe: probe,
      lifecycle: { preStop: { exec: { command: ['true'] } } } }] }))).toEqual([]);
  });
  it('only Always on init containers; none on app containers', () => {
    expect(messages(pod({ initContainers: [{ name: 's', image: 'envoy', restartPolicy: 'OnFailure' }],
      containers: [{ name: 'c', image: 'nginx:1', restartPolicy: 'Always' }] }))).toEqual([
      'spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers',
      'spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
    ]);
  });
  it('probes and hooks are forbidden on regular init containers, each named', () => {
    expect(messages(pod({ initContainers: [{ name: 'i', image: 'busybox', livenessProbe: probe, readinessProbe: probe,
      startupProbe: probe, lifecycle: { postStart: { exec: { command: ['true'] } } } }] }))).toEqual(
      ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'].map((f) =>
        `spec.initContainers[0].${f}: Forbidden: may not be set for init containers without restartPolicy=Always`));
  });
});

describe('the start sequence', () => {
  const p = (name: string, sidecar: boolean, s: Partial<InitProgress> = {}): InitProgress =>
    ({ name, sidecar, state: 'waiting', pending: false, ran: false, ...s });
  it('a sidecar first, the next init container once it has started, the apps once all are done', () => {
    expect(nextInitStep([p('side', true), p('setup', false)])).toEqual({ start: 'side' });
    expect(nextInitStep([p('side', true, { state: 'running', started: false, ran: true }), p('setup', false)])).toBe('wait');
    expect(nextInitStep([p('side', true, { state: 'running', started: true, ran: true }), p('setup', false)]))
      .toEqual({ start: 'setup' });
    expect(nextInitStep([p('side', true, { state: 'running', started: true, ran: true }),
      p('setup', false, { state: 'exited', exitCode: 0, ran: true })])).toBe('apps');
    // A sidecar backing off before its restart holds the sequence.
    expect(nextInitStep([p('side', true, { pending: true, ran: true }), p('setup', false)])).toBe('wait');
  });
  it('the apps are finished for good only under Never/OnFailure, none restarting', () => {
    const done = [st('app', { state: 'exited', exitCode: 1 })];
    expect(appsFinished(sidecarPod('Never'), done, () => false)).toBe(true);
    expect(appsFinished(sidecarPod('Always'), done, () => false)).toBe(false);
    expect(appsFinished({ ...sidecarPod('Never'), spec: { ...sidecarPod().spec!, restartPolicy: 'OnFailure' } } as Pod,
      done, () => false)).toBe(false);
    expect(appsFinished(sidecarPod('Never'), [...done, running('web')], () => false)).toBe(false);
  });
});

describe('pod status with sidecars', () => {
  it('Pending until the sidecar started; a running sidecar keeps a finished pod Running until it stops', () => {
    const pod = sidecarPod('Never');
    const app = st('app', { reason: 'PodInitializing' });
    expect(podPhase(pod, [app], [running('side', { started: false, ready: false }), st('setup', {})])).toBe('Pending');
    expect(podPhase(pod, [running('app')], [running('side'), completed('setup')])).toBe('Running');
    const appDone = completed('app');
    expect(podPhase(pod, [appDone], [running('side'), completed('setup')])).toBe('Running');
    // Stopped by the kubelet (SIGTERM: 143): the pod's outcome is its app containers'.
    const stopped = st('side', { state: 'exited', exitCode: 143, reason: 'Error' });
    expect(podPhase(pod, [appDone], [stopped, completed('setup')])).toBe('Succeeded');
    expect(podPhase(pod, [st('app', { state: 'exited', exitCode: 2, reason: 'Error' })], [stopped, completed('setup')]))
      .toBe('Failed');
  });

  it('started/ready in initContainerStatuses; Initialized waits for the sidecar\'s start; Ready counts its readiness', () => {
    const pod = sidecarPod();
    const early = buildPodStatus(pod, { uid: 'u1', podIPs: ['10.0.0.2'], containers: [st('app', { reason: 'PodInitializing' })],
      initContainers: [running('side', { started: false, ready: false }), st('setup', { reason: 'PodInitializing' })] },
    '192.0.2.1', NOW);
    expect(early.phase).toBe('Pending');
    expect(early.initContainerStatuses!.map((c) => [c.name, c.started, c.ready])).toEqual([['side', false, false],
      ['setup', false, false]]);
    expect(early.conditions!.find((c) => c.type === 'Initialized')).toMatchObject({ status: 'False',
      message: 'containers with incomplete status: [side setup]' });
    const s = buildPodStatus(pod, { uid: 'u1', podIPs: ['10.0.0.2'], containers: [running('app')],
      initContainers: [running('side', { ready: false }), completed('setup')] }, '192.0.2.1', NOW);
    expect(s.phase).toBe('Running');
    expect(s.initContainerStatuses![0]).toMatchObject({ name: 'side', started: true, ready: false });
    expect(s.initContainerStatuses![1]).toMatchObject({ name: 'setup', started: false, ready: true });
    expect(s.conditions!.find((c) => c.type === 'Initialized')?.status).toBe('True');
    expect(s.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False',
      message: 'containers with unready status: [side]' });
    const ready = buildPodStatus(pod, { uid: 'u1', podIPs: ['10.0.0.2'], containers: [running('app')],
      initContainers: [running('side'), completed('setup')] }, '192.0.2.1', NOW);
    expect(ready.conditions!.find((c) => c.type === 'Ready')?.status).toBe('True');
    // kubectl get: the sidecar counts among the containers, STATUS is the app's.
    const row = podPrinter.row({ ...pod, status: ready } as unknown as KubeObject, new Date(NOW));
    expect(row.slice(1, 4)).toEqual(['2/2', 'Running', 0]);
    const rowEarly = podPrinter.row({ ...pod, status: early } as unknown as KubeObject, new Date(NOW));
    expect(rowEarly.slice(1, 3)).toEqual(['0/2', 'Init:0/2']);
  });
});

describe('the virtual runtime with sidecars', () => {
  it('regular init containers complete, sidecars run beside the app and stop once a Never pod\'s app is done', async () => {
    const rt = buildVirtualRuntime({ completeAfterMs: 100 });
    const pod = sidecarPod('Never');
    const first = await rt.runPod(pod, { podCIDRs: ['10.244.3.0/24'] });
    expect(first.initContainers!.map((c) => [c.name, c.state, c.started])).toEqual([['side', 'running', true],
      ['setup', 'exited', undefined]]);
    expect(buildPodStatus(pod, first, '192.0.2.1', NOW).phase).toBe('Running');
    const done = await waitFor(() => {
      const s = rt.podStatus('u1');
      return s?.containers[0]?.state === 'exited' ? s : undefined;
    }, 5000, 'the app exited');
    expect(done.initContainers!.find((c) => c.name === 'side')).toMatchObject({ state: 'exited', ready: false });
    expect(buildPodStatus(pod, done, '192.0.2.1', NOW).phase).toBe('Succeeded');
    await rt.close();
  });
});
