// The kubelet's view of a container runtime. Implementations: the virtual runtime (objects
// only, IPs from host-local IPAM over the node's podCIDR) and, later, a netns runtime (a network
// namespace per pod wired by the CNI plugin). Sandboxes are keyed by pod UID; every call is
// idempotent. The runtime reports state changes through `onChange` so the kubelet can publish
// pod status.

import { kdpError } from '../errors.js';
import type { Pod } from '../api/types.js';
import type { ContainerEvent } from './container-events.js';
import type { ContainerLogStore } from './container-log-files.js';
import { readContainerLogSync } from './container-log-read.js';

export type ContainerRunState = 'waiting' | 'running' | 'exited';

export interface RuntimeContainerStatus {
  readonly name: string;
  readonly state: ContainerRunState;
  /** For waiting: `ContainerCreating`; for exited: `Completed` / `Error`. */
  readonly reason?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly exitCode?: number;
  readonly ready: boolean;
  readonly restartCount: number;
  /** Its startup probe has succeeded (or it has none); default: running. */
  readonly started?: boolean;
  readonly containerID?: string;
  readonly imageID?: string;
  /** The previous run's end, once the container has been restarted (its `lastState`). */
  readonly lastTerminated?: {
    readonly exitCode: number; readonly reason: string; readonly startedAt?: string;
    readonly finishedAt?: string; readonly containerID?: string;
  };
  /** For waiting in CrashLoopBackOff: `back-off 20s restarting failed container=…`. */
  readonly message?: string;
}

export interface RuntimePodStatus {
  readonly uid: string;
  readonly podIPs: string[];
  readonly containers: RuntimeContainerStatus[];
  /** The pod's init containers, in spec order (runtimes that run them; absent otherwise). */
  readonly initContainers?: RuntimeContainerStatus[];
}

/** A sandbox as the node's runtime endpoint lists it (`kdp crictl pods`, `ps -a`): the live ones
 *  ready, and the last removed ones (a finished Job's pod) not ready, their containers exited,
 *  until the runtime forgets them (it keeps a bounded number). */
export interface RuntimeSandboxRecord {
  /** The pod as the runtime started it (name, namespace, uid, labels, container specs). */
  readonly pod: Pod;
  /** When the sandbox was made (epoch ms). */
  readonly createdAtMs: number;
  readonly ready: boolean;
  readonly status: RuntimePodStatus;
  /** The pod's network namespace (netns runtime). */
  readonly netns?: string;
}

export interface NodeNetwork {
  /** The node's `spec.podCIDRs`. */
  readonly podCIDRs: readonly string[];
}

export interface Runtime {
  /** What the node reports in `status.nodeInfo` (osImage, kernelVersion); virtual otherwise. */
  readonly nodeInfo?: { readonly osImage: string; readonly kernelVersion: string };
  /** Creates the sandbox (with its IPs) and starts the containers. */
  runPod(pod: Pod, net: NodeNetwork): Promise<RuntimePodStatus>;
  /** Graceful stop (a pod being deleted): SIGTERM to every container now, SIGKILL after
   *  `graceMs`; resolves once all have exited. The sandbox and its IPs stay until `killPod`.
   *  Optional: without it the kubelet keeps the pod running for its grace period. */
  stopPod?(uid: string, graceMs: number): Promise<void>;
  /** Stops the containers and removes the sandbox, releasing its IPs. */
  killPod(uid: string): Promise<void>;
  podStatus(uid: string): RuntimePodStatus | undefined;
  /** The UIDs of every sandbox the runtime holds (to clean up after restarts). */
  listPods(): string[];
  /** The container's log text so far (with `previous`, its previous run's, as `kubectl logs
   *  --previous`). Throws KDP_NOT_FOUND when unknown. */
  logs(uid: string, container: string, previous?: boolean): string;
  /** Where the containers' output goes (CRI log files, container-log-files.ts): one file per
   *  run, the current and the previous run kept until the pod is removed. The kubelet API's
   *  /containerLogs reads them; optional (a runtime without it serves no logs). */
  readonly logStore?: ContainerLogStore;
  /** Registers the listener for container state changes (one per runtime). */
  onChange(listener: (uid: string) => void): void;
  /** The host pid of a running container's main process (runtimes that run processes). */
  containerPid?(uid: string, container: string): number | undefined;
  /** Starts the pod's ephemeral containers not yet started (kubectl debug); optional. */
  runEphemeral?(pod: Pod): Promise<void>;
  /** Their states, for the pod's ephemeralContainerStatuses. */
  ephemeralStatuses?(uid: string): RuntimeContainerStatus[];
  /** Registers the listener for events the runtime itself raises (a probe failed: Unhealthy);
   *  the kubelet records them on the pod. Optional: a runtime without probes has none. */
  onEvent?(listener: (uid: string, e: ContainerEvent) => void): void;
  /** Every sandbox held, and those recently removed (the runtime endpoint's view); optional. */
  sandboxRecords?(): RuntimeSandboxRecord[];
  close(): Promise<void>;
}

/** A container's output from its log files as `kubectl logs [--previous]` prints it (its latest
 *  run, or the one before); KDP_NOT_FOUND when it has none, KDP_BAD_REQUEST without a previous run. */
export function storedLogText(store: ContainerLogStore, uid: string, container: string, previous = false): string {
  const runs = store.runs(uid, container);
  if (!runs.length) throw kdpError('KDP_NOT_FOUND', `container ${container} not found`);
  if (previous && runs.length < 2) {
    throw kdpError('KDP_BAD_REQUEST', `previous terminated container "${container}" not found`);
  }
  return readContainerLogSync(store, uid, container, runs[runs.length - (previous ? 2 : 1)]!);
}

/** A container's kept output as `kubectl logs` prints it; KDP_NOT_FOUND for an unknown one.
 *  Shared by the runtimes, which keep each container's lines in `log`. */
export function containerLogText(
  sandbox: { containers: ReadonlyMap<string, { log: readonly string[]; prevLog?: readonly string[] }> } | undefined,
  container: string, previous = false,
): string {
  const c = sandbox?.containers.get(container);
  if (!c) throw kdpError('KDP_NOT_FOUND', `container ${container} not found`);
  if (previous && !c.prevLog) {
    // upstream's kubelet: there is no previous run to show.
    throw kdpError('KDP_BAD_REQUEST', `previous terminated container "${container}" not found`);
  }
  return (previous ? c.prevLog! : c.log).map((l) => `${l}\n`).join('');
}
