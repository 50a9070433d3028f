// Pod status as the kubelet publishes it, from the runtime's container states: phase,
// podIP/podIPs, hostIP(s), conditions (PodReadyToStartContainers, Initialized, Ready,
// ContainersReady, PodScheduled) and containerStatuses. Condition transition times are kept
// while a condition's status does not change.

import type { ContainerStatus, Pod, PodCondition, PodPhase, PodStatus } from '../api/types.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from './runtime.js';
import { isSidecarOf } from './sidecars.js';

export function podPhase(pod: Pod, cs: readonly RuntimeContainerStatus[],
  inits: readonly RuntimeContainerStatus[] = []): PodPhase {
  // As upstream's getPhase: until every regular init container has completed the pod is
  // Pending, or Failed once one has failed under restartPolicy Never. Sidecars (sidecars.ts)
  // hold it Pending until started, and a running one keeps it Running (until the kubelet stops
  // them once the app containers are done); one that stopped counts for nothing.
  let sidecarsPending = false;
  let sidecarsRunning = false;
  for (const i of inits) {
    if (isSidecarOf(pod, i.name)) {
      if (i.state === 'running') sidecarsRunning = true;
      if ((i.state === 'running' && i.started === false) || (i.state === 'waiting' && !i.lastTerminated)) {
        sidecarsPending = true;
      }
      continue;
    }
    if (i.state === 'exited' && (i.exitCode ?? 0) === 0) continue;
    return i.state === 'exited' && pod.spec?.restartPolicy === 'Never' ? 'Failed' : 'Pending';
  }
  const initializedBefore = cs.some((c) => c.state !== 'waiting' || c.lastTerminated);
  if (sidecarsPending && !initializedBefore) return 'Pending';
  // A container waiting to be restarted counts as stopped.
  if (cs.length === 0) return 'Pending';
  if (cs.some((c) => c.state === 'waiting' && !c.lastTerminated)) return 'Pending';
  if (cs.some((c) => c.state === 'running') || sidecarsRunning) return 'Running';
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Always') return 'Running';
  if (cs.every((c) => c.state === 'exited' && (c.exitCode ?? 0) === 0)) return 'Succeeded';
  return policy === 'Never' ? 'Failed' : 'Running';
}

function containerStatus(c: RuntimeContainerStatus, image: string, init = false, sidecar = false): ContainerStatus {
  const state = c.state === 'waiting'
    ? {
      waiting: { reason: c.reason ?? 'ContainerCreating', ...(c.message ? { message: c.message } : {}) },
    }
    : c.state === 'running' ? { running: { startedAt: c.startedAt } }
      : {
        terminated: {
          exitCode: c.exitCode ?? 0, reason: c.reason ?? 'Completed', startedAt: c.startedAt,
          finishedAt: c.finishedAt, containerID: c.containerID,
        },
      };
  return {
    name: c.name, state, lastState: c.lastTerminated ? { terminated: { ...c.lastTerminated } } : {},
    ready: c.ready, restartCount: c.restartCount,
    image, imageID: c.imageID ?? image,
    ...(c.state !== 'waiting' ? { containerID: c.containerID } : {}),
    // A regular init container is never `started` (upstream sets it for sidecars only).
    started: (!init || sidecar) && c.state === 'running' && c.started !== false,
  };
}

export function buildPodStatus(
  pod: Pod, rt: RuntimePodStatus | undefined, hostIPs: string | readonly string[], now: string,
): PodStatus {
  // Dual-stack nodes report both node IPs, primary first (upstream status.hostIPs).
  const hosts = typeof hostIPs === 'string' ? [hostIPs] : hostIPs;
  const hostIP = hosts[0]!;
  const cs = rt?.containers ?? [];
  const inits = rt?.initContainers ?? [];
  const phase = podPhase(pod, cs, inits);
  const sidecar = (name: string) => isSidecarOf(pod, name);
  // Initialized: every regular init container completed and every sidecar started, or an app
  // container has run already (upstream: a pod once initialized stays so).
  const initializedBefore = cs.some((c) => c.state !== 'waiting' || c.lastTerminated);
  const incomplete = initializedBefore ? [] : inits.filter((c) => (sidecar(c.name)
    ? !(c.state === 'running' && c.started !== false)
    : !(c.state === 'exited' && (c.exitCode ?? 0) === 0))).map((c) => c.name);
  // Sidecars' readiness counts for the pod's (upstream GenerateContainersReadyCondition).
  const sidecars = inits.filter((c) => sidecar(c.name));
  const allReady = cs.length > 0 && cs.every((c) => c.ready) && sidecars.every((c) => c.ready);
  const old = pod.status?.conditions ?? [];
  const cond = (type: string, ok: boolean, reason?: string): PodCondition => {
    const status = ok ? 'True' : 'False';
    const prev = old.find((c) => c.type === type);
    return {
      type, status, lastProbeTime: null,
      lastTransitionTime: prev?.status === status ? prev.lastTransitionTime : now,
      ...(reason && !ok ? { reason } : {}),
    };
  };
  const notReady = [...sidecars, ...cs].filter((c) => !c.ready).map((c) => c.name);
  const msg = `containers with unready status: [${notReady.join(' ')}]`;
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const conditions: PodCondition[] = [
    cond('PodReadyToStartContainers', !!rt && !terminal),
    { ...cond('Initialized', incomplete.length === 0, 'ContainersNotInitialized'),
      ...(incomplete.length ? { message: `containers with incomplete status: [${incomplete.join(' ')}]` } : {}) },
    { ...cond('Ready', allReady, terminal ? 'PodCompleted' : 'ContainersNotReady'),
      ...(allReady ? {} : { message: msg }) },
    { ...cond('ContainersReady', allReady, terminal ? 'PodCompleted' : 'ContainersNotReady'),
      ...(allReady ? {} : { message: msg }) },
    cond('PodScheduled', true),
  ];
  const images = new Map((pod.spec?.containers ?? []).map((c) => [c.name, c.image ?? '']));
  const ips = rt?.podIPs ?? (pod.status?.podIPs ?? []).map((p) => p.ip);
  return {
    phase,
    conditions,
    hostIP, hostIPs: hosts.map((ip) => ({ ip })),
    ...(ips.length ? { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) } : {}),
    startTime: pod.status?.startTime ?? now,
    ...(inits.length ? { initContainerStatuses: inits.map((c) => containerStatus(c,
      (pod.spec?.initContainers ?? []).find((s) => s.name === c.name)?.image ?? '', true, sidecar(c.name))) } : {}),
    containerStatuses: cs.map((c) => containerStatus(c, images.get(c.name) ?? '')),
    qosClass: qosClass(pod),
  };
}

function qosClass(pod: Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const cs = pod.spec?.containers ?? [];
  const any = cs.some((c) => Object.keys(c.resources?.requests ?? {}).length
    || Object.keys(c.resources?.limits ?? {}).length);
  if (!any) return 'BestEffort';
  const guaranteed = cs.every((c) => ['cpu', 'memory'].every((r) => c.resources?.limits?.[r]
    !== undefined && String(c.resources.limits[r]) === String(c.resources.requests?.[r]
      ?? c.resources.limits[r])));
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
