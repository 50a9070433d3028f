// What every step of the netns runtime works with: the runtime's context (its options, the
// node's boundary objects, the live sandboxes, where changes and events go) and the state of one
// pod sandbox and its containers. The steps are plain functions taking this context
// (sandbox-setup.ts, pod-holder.ts, container-start.ts, container-probes.ts, container-exit.ts,
// termination.ts); ../runtime-netns.ts only builds the context and answers the Runtime calls.

import type { Container as ContainerSpec, Pod } from '../../api/types.js';
import type { Launcher, Workload } from '../../host/launcher.js';
import type { SandboxNetns } from '../../host/netns.js';
import type { RestartBackoff } from '../backoff.js';
import type { PodNetwork } from '../cni-caller.js';
import type { ContainerEvent } from '../container-events.js';
import type { ContainerLogStore, ContainerLogWriter } from '../container-log-files.js';
import type { EchoCommand } from '../echo-command.js';
import type { Prober } from '../prober.js';
import type { ReadinessWorker } from '../readiness.js';
import type { NodeNetwork, RuntimeContainerStatus, RuntimePodStatus } from '../runtime.js';
import type { NetnsRuntimeOptions } from './options.js';

/** The runtime's context: built once by buildNetnsRuntime, passed to every step. */
export interface NetnsPods {
  readonly o: NetnsRuntimeOptions;
  /** Multiplies probe periods, hook sleeps, grace periods and restart back-off. */
  readonly scale: number;
  readonly echo: EchoCommand;
  readonly logStore: ContainerLogStore;
  readonly prober: Prober;
  readonly launcher: Launcher;
  readonly netnses: SandboxNetns;
  readonly podNetwork: PodNetwork;
  /** The live sandboxes by pod UID. */
  readonly sandboxes: Map<string, Sandbox>;
  /** A pod's status changed (the kubelet publishes it). */
  changed(uid: string): void;
  /** An Event about a pod (or one of its containers). */
  event(uid: string, e: ContainerEvent): void;
}

/** One container of a sandbox, across its runs. */
export interface ContainerState {
  status: RuntimeContainerStatus;
  child?: Workload;
  /** The current run's log file (container-log-files.ts). */
  logWriter?: ContainerLogWriter;
  /** The Warning about the image's program has been recorded (once per container). */
  warned?: boolean;
  /** The env of its last start: exec runs with it, as CRI runtimes do. */
  env?: Record<string, string | undefined>;
  readonly backoff: RestartBackoff;
  readiness?: ReadinessWorker;
  liveness?: ReadinessWorker;
  /** The startup probe's worker until it has succeeded. */
  startup?: ReadinessWorker;
  restartTimer?: NodeJS.Timeout;
  /** An init container (spec.initContainers): runs to completion before the app containers. */
  readonly init?: boolean;
  /** A sidecar: an init container with restartPolicy Always (sidecars.ts). */
  readonly sidecar?: boolean;
  /** Its program is being resolved (between startContainer and runContainer). */
  launching?: boolean;
  /** It has run at least once. */
  ran?: boolean;
}

export interface Sandbox {
  readonly uid: string;
  readonly pod: Pod;
  readonly netns: string;
  readonly net: NodeNetwork;
  /** When it was made (epoch ms; the runtime endpoint's createdAt). */
  readonly createdAtMs: number;
  podIPs: string[];
  readonly containers: Map<string, ContainerState>;
  stopping: boolean;
  /** The app containers have been started (once every init container is done or started). */
  appsStarted?: boolean;
  /** The app containers have finished for good: the sidecars are stopping, not restarting. */
  sidecarsStopping?: boolean;
  /** The process holding the pod's mount/UTS/IPC namespaces (with `podsDir`). */
  holder?: Workload;
  podDir?: string;
}

/** The sandbox is still the pod's and not being stopped: a late callback may act on it. */
export function isLive(ctx: NetnsPods, sb: Sandbox): boolean {
  return !sb.stopping && ctx.sandboxes.get(sb.uid) === sb;
}

/** The container's spec, app or init (names are unique across both, by validation). */
export function specOf(sb: Sandbox, name: string): ContainerSpec | undefined {
  return sb.pod.spec?.containers?.find((c) => c.name === name)
    ?? sb.pod.spec?.initContainers?.find((c) => c.name === name);
}

/** The Event's fieldPath of a container. */
export function fieldPath(c: ContainerState, name: string): string {
  return `spec.${c.init ? 'initContainers' : 'containers'}{${name}}`;
}

/** The pod's terminationGracePeriodSeconds (default 30 s), scaled, in ms. */
export function podGraceMs(ctx: NetnsPods, sb: Sandbox): number {
  return (sb.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000 * ctx.scale;
}

/** Stops the container's probe workers. */
export function stopProbeWorkers(c: ContainerState): void {
  c.readiness?.stop();
  c.liveness?.stop();
  c.startup?.stop();
}

export function podStatus(sb: Sandbox): RuntimePodStatus {
  const all = [...sb.containers.values()];
  const inits = all.filter((c) => c.init);
  return {
    uid: sb.uid, podIPs: [...sb.podIPs],
    containers: all.filter((c) => !c.init).map((c) => ({ ...c.status })),
    ...(inits.length ? { initContainers: inits.map((c) => ({ ...c.status })) } : {}),
  };
}

/** Now, as the API's timestamps (seconds). */
export function isoNow(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** One run of a container (one process, one container ID): what its probes, hooks, output and
 *  exit handling share. A callback of an earlier run does nothing (see isCurrent). */
export interface ContainerRun {
  readonly sb: Sandbox;
  readonly name: string;
  readonly c: ContainerState;
  readonly spec: ContainerSpec | undefined;
  readonly child: Workload;
  /** The echo workload (kdp/echo without a command): ready once it prints `ready`. */
  readonly isEcho: boolean;
  /** A regular init container: no probes nor hooks (upstream validation), ready once completed. */
  readonly plainInit: boolean;
  /** The echo has said it listens. */
  listening: boolean;
  /** Lets the next init container (or the app containers) start: a sidecar has started. */
  startNext(): void;
}

/** The run is still the container's current one. */
export function isCurrent(run: ContainerRun): boolean {
  return run.c.child === run.child;
}
