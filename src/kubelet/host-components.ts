// The node's own components run as pods (kubeadm's kube-proxy DaemonSet, the pod network's
// agent): a hostNetwork pod whose container image is one the node knows as a component
// (images.ts: kube-proxy, kdp/cni) is not handed to the container runtime; the kubelet starts
// that component in its own process for the pod, and stops it when the pod stops. So the
// component runs BECAUSE its pod runs: deleting the pod stops it, its replacement starts it
// anew with whatever configuration the new pod mounts. The pod's IPs are the node's
// (hostNetwork). Its container is Running once the component started, Ready while the
// component says so (kube-proxy: its /healthz). A start that fails is the container exiting
// with Error: it waits in CrashLoopBackOff (10 s doubling to 5 min, scaled) and is started again
// with restartCount + 1; the error is in its log (`kubectl logs`) and told to `onError`.
// Every other pod goes to the wrapped runtime unchanged.

import type { Pod } from '../api/types.js';
import { imageKind, type ImageKind } from './images.js';
import type { Runtime, RuntimeContainerStatus, RuntimePodStatus } from './runtime.js';
import { containerLogText, storedLogText } from './runtime.js';
import type { ContainerLogWriter } from './container-log-files.js';

/** A component as the kubelet runs it for one pod. */
export interface HostComponentRun {
  /** Whether the component is ready now (the container's readiness). */
  ready(): boolean;
  /** Stops it; what it made (rules, routes) stays, as a component exiting leaves it. */
  stop(): Promise<void>;
}

export interface HostComponent {
  /** Starts the component for `pod`; a rejection is the container failing to start. */
  start(pod: Pod, log: (line: string) => void): Promise<HostComponentRun>;
}

export interface HostComponentsOptions {
  readonly nodeIPs: readonly string[];
  readonly components: Partial<Record<ImageKind, HostComponent>>;
  /** Multiplies readiness period and back-off. Default 1. */
  readonly timeScale?: number;
  /** How often readiness is looked at. Default 1 s (× timeScale). */
  readonly readinessPeriodMs?: number;
  readonly now?: () => number;
  /** A component's start failed (the pod and the error). */
  readonly onError?: (pod: Pod, err: unknown) => void;
}

interface HostSandbox {
  readonly uid: string;
  readonly pod: Pod;
  readonly kind: ImageKind;
  status: RuntimeContainerStatus;
  log: string[];
  prevLog?: string[];
  /** The run's CRI log file, when the wrapped runtime keeps them (what `kubectl logs` reads). */
  writer?: ContainerLogWriter;
  run?: HostComponentRun;
  stopped: boolean;
  timer?: NodeJS.Timeout;
  failures: number;
}

/** The component a pod runs, or undefined for an ordinary pod. */
export function hostComponentOf(pod: Pod, components: HostComponentsOptions['components']): ImageKind | undefined {
  if (!pod.spec?.hostNetwork) return undefined;
  const kind = imageKind(pod.spec.containers?.[0]?.image);
  return components[kind] ? kind : undefined;
}

export interface HostComponentsRuntime extends Runtime {
  /** Stops every component (the node's agents going away); their pods are forgotten. */
  stopComponents(): Promise<void>;
}

export function withHostComponents(inner: Runtime, o: HostComponentsOptions): HostComponentsRuntime {
  const scale = o.timeScale ?? 1;
  const now = o.now ?? Date.now;
  const iso = () => new Date(now()).toISOString().replace(/\.\d+Z$/, 'Z');
  const sandboxes = new Map<string, HostSandbox>();
  let listener: (uid: string) => void = () => {};
  const changed = (sb: HostSandbox) => { if (sandboxes.get(sb.uid) === sb) listener(sb.uid); };

  const statusOf = (sb: HostSandbox): RuntimePodStatus => ({
    uid: sb.uid, podIPs: [...o.nodeIPs], containers: [{ ...sb.status }],
  });

  function set(sb: HostSandbox, patch: Partial<RuntimeContainerStatus>): void {
    const next = { ...sb.status, ...patch };
    if (JSON.stringify(next) === JSON.stringify(sb.status)) return;
    sb.status = next;
    changed(sb);
  }

  function watchReadiness(sb: HostSandbox): void {
    clearInterval(sb.timer);
    sb.timer = setInterval(() => {
      if (sb.stopped || !sb.run) return;
      set(sb, { ready: sb.run.ready() });
    }, Math.max(1, (o.readinessPeriodMs ?? 1000) * scale));
    sb.timer.unref?.();
  }

  function start(sb: HostSandbox): void {
    const store = inner.logStore;
    sb.writer?.close();
    sb.writer = store?.open({ namespace: sb.pod.metadata.namespace ?? 'default', name: sb.pod.metadata.name!, uid: sb.uid },
      sb.status.name, sb.status.restartCount);
    // As the kubelet keeps them: the current and the previous run.
    for (const old of store?.runs(sb.uid, sb.status.name) ?? []) {
      if (old < sb.status.restartCount - 1) store!.removeRun(sb.uid, sb.status.name, old);
    }
    // The components log as klog does: to stderr.
    const line = (l: string) => {
      sb.log.push(`${iso()} ${l}`);
      if (sb.log.length > 1000) sb.log.shift();
      sb.writer?.write('stderr', `${l}\n`);
    };
    const startedAt = iso();
    o.components[sb.kind]!.start(sb.pod, line).then((run) => {
      if (sb.stopped) { void run.stop(); return; }
      sb.run = run;
      sb.failures = 0;
      set(sb, { state: 'running', reason: undefined, message: undefined, startedAt, ready: run.ready(), started: true });
      watchReadiness(sb);
    }, (e: unknown) => {
      if (sb.stopped) return;
      const msg = (e as Error).message ?? String(e);
      line(`E failed to start: ${msg}`);
      o.onError?.(sb.pod, e);
      sb.failures++;
      const backoff = Math.min(10 * 2 ** (sb.failures - 1), 300);
      const name = sb.status.name;
      set(sb, { state: 'waiting', reason: 'CrashLoopBackOff', ready: false, started: false,
        message: `back-off ${backoff}s restarting failed container=${name} pod=${sb.pod.metadata.name}_` +
          `${sb.pod.metadata.namespace}(${sb.uid})`,
        lastTerminated: { exitCode: 1, reason: 'Error', startedAt, finishedAt: iso(), containerID: sb.status.containerID } });
      const t = setTimeout(() => {
        if (sb.stopped || sandboxes.get(sb.uid) !== sb) return;
        sb.prevLog = sb.log;
        sb.log = [];
        set(sb, { restartCount: sb.status.restartCount + 1 });
        start(sb);
      }, backoff * 1000 * scale);
      t.unref?.();
    });
  }

  async function stop(sb: HostSandbox): Promise<void> {
    if (sb.stopped) return;
    sb.stopped = true;
    clearInterval(sb.timer);
    const run = sb.run;
    sb.run = undefined;
    await run?.stop();
    sb.writer?.close();
    // The component exits on SIGTERM at once, with code 0 (kube-proxy's does).
    if (sb.status.state === 'running') {
      set(sb, { state: 'exited', reason: 'Completed', exitCode: 0, ready: false, finishedAt: iso() });
    }
  }

  // What this wrapper does not override goes to the wrapped runtime as it is.
  const delegated = Object.fromEntries(Object.entries(inner).map(([k, v]) =>
    [k, typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(inner) : v])) as unknown as Runtime;
  return {
    ...delegated,
    async runPod(pod, net) {
      const uid = pod.metadata.uid!;
      const have = sandboxes.get(uid);
      if (have) return statusOf(have);
      const kind = hostComponentOf(pod, o.components);
      if (!kind) return inner.runPod(pod, net);
      const c = pod.spec!.containers[0]!;
      const sb: HostSandbox = {
        uid, pod, kind, log: [], stopped: false, failures: 0,
        status: { name: c.name, state: 'waiting', reason: 'ContainerCreating', ready: false, restartCount: 0,
          containerID: `kdp://${process.pid}/${uid.slice(0, 8)}`, imageID: c.image ?? '' },
      };
      sandboxes.set(uid, sb);
      start(sb);
      return statusOf(sb);
    },
    async stopPod(uid, graceMs) {
      const sb = sandboxes.get(uid);
      if (sb) { await stop(sb); return; }
      if (inner.stopPod) { await inner.stopPod(uid, graceMs); return; }
      // The wrapped runtime cannot stop a pod gracefully: as the kubelet does without stopPod,
      // the pod keeps running for its grace period.
      await new Promise<void>((r) => { const t = setTimeout(r, graceMs); t.unref?.(); });
    },
    async killPod(uid) {
      const sb = sandboxes.get(uid);
      if (!sb) { await inner.killPod(uid); return; }
      await stop(sb);
      sandboxes.delete(uid);
    },
    podStatus: (uid) => {
      const sb = sandboxes.get(uid);
      return sb ? statusOf(sb) : inner.podStatus(uid);
    },
    listPods: () => [...inner.listPods(), ...sandboxes.keys()],
    logs(uid, container, previous) {
      const sb = sandboxes.get(uid);
      if (!sb) return inner.logs(uid, container, previous);
      if (inner.logStore) return storedLogText(inner.logStore, uid, container, previous);
      return containerLogText({ containers: new Map([[sb.status.name, { log: sb.log, prevLog: sb.prevLog }]]) },
        container, previous);
    },
    onChange(l) { listener = l; inner.onChange(l); },
    ...(inner.runEphemeral ? { runEphemeral: (pod: Pod) => (sandboxes.has(pod.metadata.uid!) ? Promise.resolve()
      : inner.runEphemeral!(pod)) } : {}),
    ...(inner.ephemeralStatuses ? { ephemeralStatuses: (uid: string) => (sandboxes.has(uid) ? []
      : inner.ephemeralStatuses!(uid)) } : {}),
    async stopComponents() {
      for (const sb of [...sandboxes.values()]) await stop(sb);
      sandboxes.clear();
    },
    async close() {
      await this.stopComponents();
      await inner.close();
    },
  };
}
