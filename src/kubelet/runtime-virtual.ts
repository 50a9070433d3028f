// The virtual runtime: no kernel objects. A pod's IP comes from host-local IPAM (round-robin
// over the node's podCIDR, gateway .1 reserved, as the CNI plugin would give it); containers go
// Waiting(ContainerCreating) → Running after `startDelayMs`, and turn ready after their
// readiness probe's initialDelaySeconds (or `readyDelayMs` without a probe). Pods that may
// complete (restartPolicy Never/OnFailure) exit after the `kdp.io/virtual-run-seconds`
// annotation (default `completeAfterMs`), with the code in `kdp.io/virtual-exit-code`.
// Each container writes a few synthetic lines to its CRI log file (container-log-files.ts).
// Init containers complete at once, in order; sidecars run beside the app containers and stop
// once a completing pod's app containers have exited.

import type { Pod } from '../api/types.js';
import { kdpError } from '../errors.js';
import { buildHostLocalIpam, type HostLocalIpam } from '../cni/ipam/host-local.js';
import { buildMemoryIpamStore, type IpamStore } from '../cni/ipam/store.js';
import type {
  NodeNetwork, Runtime, RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxRecord,
} from './runtime.js';
import { storedLogText } from './runtime.js';
import { memoryLogStore, type ContainerLogStore } from './container-log-files.js';
import { containerIdUrl } from './runtime-endpoint/ids.js';
import { isSidecar } from './sidecars.js';

export interface VirtualRuntimeOptions {
  readonly startDelayMs?: number;
  readonly readyDelayMs?: number;
  /** How long a container of a Never/OnFailure pod runs without the run-seconds annotation.
   * Default 1000 ms (scaled). */
  readonly completeAfterMs?: number;
  readonly timeScale?: number;
  /** IPAM store; default in memory. */
  readonly store?: IpamStore;
  readonly now?: () => number;
  /** Where the synthetic log lines go (the node's CRI log files); default in memory. */
  readonly logStore?: ContainerLogStore;
}

export const RUN_SECONDS_ANNOTATION = 'kdp.io/virtual-run-seconds';
export const EXIT_CODE_ANNOTATION = 'kdp.io/virtual-exit-code';

/** Removed sandboxes still listed (not ready) by the runtime endpoint; oldest dropped first. */
const MAX_RETIRED = 256;

interface Sandbox {
  uid: string;
  pod: Pod;
  createdAtMs: number;
  podIPs: string[];
  containers: Map<string, RuntimeContainerStatus>;
  /** Init containers: regular ones complete at once, in order; sidecars run beside the app. */
  inits: Map<string, RuntimeContainerStatus>;
  timers: NodeJS.Timeout[];
}

export function buildVirtualRuntime(o: VirtualRuntimeOptions = {}): Runtime {
  const scale = o.timeScale ?? 1;
  const now = o.now ?? Date.now;
  const store = o.store ?? buildMemoryIpamStore();
  const sandboxes = new Map<string, Sandbox>();
  const logStore = o.logStore ?? memoryLogStore();
  /** Synthetic lines of a container's one run, through the same log files as real output. */
  const say = (pod: Pod, container: string, lines: readonly string[]) => {
    const w = logStore.open({ namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name!,
      uid: pod.metadata.uid! }, container, 0);
    for (const l of lines) w.write('stdout', `${l}\n`);
    w.close();
  };
  const retired = new Map<string, Sandbox>();
  let ipam: { key: string; ipam: HostLocalIpam } | undefined;
  let listener: (uid: string) => void = () => {};
  const iso = () => new Date(now()).toISOString().replace(/\.\d+Z$/, 'Z');

  function ipamFor(net: NodeNetwork): HostLocalIpam {
    const key = net.podCIDRs.join(',');
    if (!ipam || ipam.key !== key) {
      ipam = { key, ipam: buildHostLocalIpam(net.podCIDRs.map((s) => [{ subnet: s }]), store) };
    }
    return ipam.ipam;
  }

  function status(sb: Sandbox): RuntimePodStatus {
    return {
      uid: sb.uid, podIPs: [...sb.podIPs],
      containers: [...sb.containers.values()].map((c) => ({ ...c })),
      ...(sb.inits.size ? { initContainers: [...sb.inits.values()].map((c) => ({ ...c })) } : {}),
    };
  }

  function record(sb: Sandbox, ready: boolean): RuntimeSandboxRecord {
    return { pod: sb.pod, createdAtMs: sb.createdAtMs, ready, status: status(sb) };
  }

  // With no delay a transition happens at once (and the kubelet publishes one status, not
  // two); otherwise on a timer, reported through the listener.
  function later(sb: Sandbox, ms: number, fn: () => void, sync = false): void {
    if (sync && ms <= 0) { fn(); return; }
    const t = setTimeout(() => { if (sandboxes.get(sb.uid) === sb) { fn(); listener(sb.uid); } },
      Math.max(0, ms));
    t.unref?.();
    sb.timers.push(t);
  }

  function start(sb: Sandbox, pod: Pod): void {
    const startDelay = (o.startDelayMs ?? 0) * scale;
    const ann = pod.metadata.annotations ?? {};
    const completes = (pod.spec?.restartPolicy ?? 'Always') !== 'Always';
    const runFor = ann[RUN_SECONDS_ANNOTATION] ?? (completes
      ? String((o.completeAfterMs ?? 1000) / 1000) : undefined);
    const exitCode = Number(ann[EXIT_CODE_ANNOTATION] ?? 0);
    later(sb, startDelay, () => {
      // Init containers in order: a regular one completes at once; a sidecar (sidecars.ts) starts
      // and runs beside the app containers until they are done.
      for (const spec of pod.spec?.initContainers ?? []) {
        const c = sb.inits.get(spec.name)!;
        if (!isSidecar(spec)) {
          say(pod, spec.name, [`[kdp-virtual] init container ${spec.name} completed`]);
          sb.inits.set(spec.name, { ...c, state: 'exited', ready: true, exitCode: 0, reason: 'Completed',
            startedAt: iso(), finishedAt: iso() });
          continue;
        }
        say(pod, spec.name, [`[kdp-virtual] started sidecar ${spec.name} (image ${spec.image ?? ''})`]);
        sb.inits.set(spec.name, { ...c, state: 'running', reason: undefined, startedAt: iso(), started: true,
          ready: !spec.readinessProbe });
        if (spec.readinessProbe) {
          later(sb, (spec.readinessProbe.initialDelaySeconds ?? 0) * 1000 * scale, () => {
            const cur = sb.inits.get(spec.name)!;
            if (cur.state === 'running') sb.inits.set(spec.name, { ...cur, ready: true });
          });
        }
      }
      for (const spec of pod.spec?.containers ?? []) {
        const c = sb.containers.get(spec.name)!;
        const probe = spec.readinessProbe;
        say(pod, spec.name, [`[kdp-virtual] started container ${spec.name} (image ${spec.image ?? ''})`,
          `[kdp-virtual] listening on ports ${(spec.ports ?? []).map((p) => p.containerPort).join(',') || 'none'}`]);
        sb.containers.set(spec.name, {
          ...c, state: 'running', reason: undefined, startedAt: iso(),
          ready: !probe && !o.readyDelayMs,
        });
        const readyIn = probe ? (probe.initialDelaySeconds ?? 0) * 1000 * scale
          : (o.readyDelayMs ?? 0) * scale;
        if (probe || o.readyDelayMs) {
          later(sb, readyIn, () => {
            const cur = sb.containers.get(spec.name)!;
            if (cur.state === 'running') sb.containers.set(spec.name, { ...cur, ready: true });
          });
        }
      }
      if (runFor !== undefined && completes) {
        later(sb, Number(runFor) * 1000 * scale, () => {
          for (const [name, c] of sb.containers) {
            say(pod, name, [`[kdp-virtual] exited with code ${exitCode}`]);
            sb.containers.set(name, {
              ...c, state: 'exited', ready: false, exitCode, finishedAt: iso(),
              reason: exitCode === 0 ? 'Completed' : 'Error',
            });
          }
          // The app containers are done: the sidecars stop (they never hold a Job's pod).
          stopSidecars(sb);
        });
      }
    }, true);
  }

  /** Running sidecars end (SIGTERM's 143 would be theirs in netns mode; here a clean stop). */
  function stopSidecars(sb: Sandbox): void {
    for (const [name, c] of [...sb.inits].reverse()) {
      if (c.state !== 'running') continue;
      say(sb.pod, name, ['[kdp-virtual] stopped']);
      sb.inits.set(name, { ...c, state: 'exited', ready: false, started: false, exitCode: 0, reason: 'Completed',
        finishedAt: iso() });
    }
  }

  return {
    async runPod(pod, net) {
      const uid = pod.metadata.uid!;
      const existing = sandboxes.get(uid);
      if (existing) return status(existing);
      if (net.podCIDRs.length === 0) {
        throw kdpError('KDP_UNAVAILABLE', 'node has no podCIDR yet');
      }
      const ips = ipamFor(net).allocate(uid, 'eth0').map((c) => c.address.split('/')[0]!);
      const sb: Sandbox = { uid, pod, createdAtMs: now(), podIPs: ips, containers: new Map(), inits: new Map(),
        timers: [] };
      const inits = pod.spec?.initContainers ?? [];
      for (const spec of inits) {
        sb.inits.set(spec.name, {
          name: spec.name, state: 'waiting', reason: 'PodInitializing', ready: false,
          restartCount: 0, containerID: containerIdUrl(uid, spec.name, 0), imageID: spec.image ?? '',
        });
      }
      for (const spec of pod.spec?.containers ?? []) {
        sb.containers.set(spec.name, {
          name: spec.name, state: 'waiting', reason: inits.length ? 'PodInitializing' : 'ContainerCreating', ready: false,
          restartCount: 0, containerID: containerIdUrl(uid, spec.name, 0),
          imageID: spec.image ?? '',
        });
      }
      sandboxes.set(uid, sb);
      start(sb, pod);
      return status(sb);
    },
    async killPod(uid) {
      const sb = sandboxes.get(uid);
      sandboxes.delete(uid);
      if (sb) {
        for (const t of sb.timers) clearTimeout(t);
        // Its containers stop with it (listed exited until forgotten), the sidecars last.
        for (const [name, c] of sb.containers) {
          if (c.state === 'running') {
            sb.containers.set(name, { ...c, state: 'exited', ready: false, exitCode: 0, reason: 'Completed',
              finishedAt: iso() });
          }
        }
        stopSidecars(sb);
        retired.delete(uid);
        retired.set(uid, sb);
        if (retired.size > MAX_RETIRED) retired.delete(retired.keys().next().value!);
      }
      if (ipam) ipam.ipam.release(uid, 'eth0');
      else store.releaseByID(uid, 'eth0');
    },
    podStatus: (uid) => {
      const sb = sandboxes.get(uid);
      return sb ? status(sb) : undefined;
    },
    listPods: () => [...sandboxes.keys()],
    sandboxRecords: () => [
      ...[...retired.values()].filter((sb) => !sandboxes.has(sb.uid)).map((sb) => record(sb, false)),
      ...[...sandboxes.values()].map((sb) => record(sb, true))],
    logStore,
    logs: (uid, container, previous) => storedLogText(logStore, uid, container, previous),
    onChange(l) { listener = l; },
    async close() {
      for (const sb of sandboxes.values()) for (const t of sb.timers) clearTimeout(t);
    },
  };
}
