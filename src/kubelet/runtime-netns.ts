// The netns runtime: a pod sandbox is a network namespace (`<prefix>-p-<hash of uid>`, made by a
// line to a running `ip -batch`, host/netns.ts) wired by the CNI plugin, called in-process
// with the node's namespace as the plugin's own (bridge `cni0`, isGateway, no ipMasq, host-local
// over the node's podCIDR); containers are processes started in the pod namespace with
// `nsenter --net`, forked by small launcher helpers (host/launcher.ts), not by kdp. A container runs
// what its spec says, through the image table (images.ts: Docker's entrypoint/cmd rules, the
// host's programs as every image's, kdp's stand-ins for pause/agnhost/web servers/kdp-dns, the
// `kdp/echo` workload for kdp/echo and for unknown images without a command), with its env
// (container-env.ts), `$(VAR)`-expanded command and args, and workingDir. With `podsDir` (kdp
// up), each pod also gets mount, UTS and IPC namespaces held by one process (pod-mounts.ts:
// hostname, resolv.conf, hosts, /etc and /tmp overlays, volumes) that containers and exec join
// with `nsenter --target`; stdin/tty containers run under interactive.ts for attach. The echo turns ready
// once it prints `ready`; other programs when they run. With a readiness probe, when the probe
// says so (readiness.ts: tcp/http from the node namespace by the node's Prober, exec inside the
// container's namespaces). Init containers run first, one at a time in spec order, each to
// completion (the others wait in PodInitializing); a failed one is restarted with back-off unless
// restartPolicy is Never. A container that exits is terminated with its exit code (reason
// Completed for 0, Error otherwise) and restarted per restartPolicy with upstream's back-off
// (backoff.ts); a restart keeps the last run's output for `logs --previous`. A liveness probe
// that fails failureThreshold times (or a startup probe before it has ever passed, or a failed
// postStart hook) kills the container the way deletion does: its preStop hook (exec, httpGet,
// sleep), then SIGTERM, SIGKILL after the grace period; then CNI DEL and the namespace goes.
// Namespaces and processes are recorded in the host state file (before creation for namespaces)
// so `kdp down` can remove them after a crash.
//
// This file builds the runtime's context and answers the Runtime calls; the work is in named
// steps under netns-runtime/, each a function of that context (pods.ts): the sandbox
// (sandbox-setup.ts, pod-holder.ts), what a container runs (container-program.ts), starting it
// (container-start.ts), its probes and hooks (container-probes.ts, in-container.ts), its exit and
// restart (container-exit.ts), and stopping (termination.ts).

import { release } from 'node:os';
import { join } from 'node:path';
import { recordProcess } from '../host/process.js';
import { buildSandboxNetns } from '../host/netns.js';
import { buildHelperLauncher } from '../host/launcher.js';
import type { Pod } from '../api/types.js';
import type { NodeNetwork, Runtime, RuntimePodStatus, RuntimeSandboxRecord } from './runtime.js';
import { storedLogText } from './runtime.js';
import { memoryLogStore } from './container-log-files.js';
import { buildPodNetwork } from './cni-caller.js';
import { buildHelperProber } from './prober.js';
import { jsEchoCommand } from './echo-command.js';
import type { InteractiveWorkload } from './interactive.js';
import type { StreamOptions, StreamProcess } from './streams.js';
import type { ContainerEvent } from './container-events.js';
import type { NetnsRuntimeOptions } from './netns-runtime/options.js';
import { podStatus, type NetnsPods, type Sandbox } from './netns-runtime/pods.js';
import { createSandbox, removeSandbox } from './netns-runtime/sandbox-setup.js';
import { startVolumeSync, stopHolder } from './netns-runtime/pod-holder.js';
import { startNext } from './netns-runtime/container-start.js';
import { stopProcesses } from './netns-runtime/termination.js';

export type { NetnsRuntimeOptions } from './netns-runtime/options.js';
export { podNetnsName } from './netns-runtime/sandbox-setup.js';

/** Removed sandboxes whose logs are kept (a finished Job's pod stays readable with `kubectl
 *  logs`, as upstream keeps exited containers until the pod goes); oldest dropped first. */
const MAX_RETIRED = 256;

/** The netns runtime also names the process whose namespaces exec enters. */
export interface NetnsRuntime extends Runtime {
  /** The pod's namespace holder's pid; undefined without per-pod mount namespaces. */
  podHolderPid(uid: string): number | undefined;
  /** The env the container was last started with (exec's env). */
  containerEnv(uid: string, container: string): Record<string, string | undefined> | undefined;
  /** A session on a stdin/tty container's stdio (attach); undefined for other containers. */
  attachContainer(uid: string, container: string, opts: StreamOptions): StreamProcess | undefined;
}

/** The runtime's context from its options: the defaults of the echo, log store, prober,
 *  launcher, namespace maker and pod network, and where changes and events go. */
function buildContext(o: NetnsRuntimeOptions, notify: Pick<NetnsPods, 'changed' | 'event'>): NetnsPods {
  const processes = {
    onSpawn: (pid: number) => o.state.addProcess(recordProcess(pid)),
    onExit: (pid: number) => o.state.removeProcess(pid),
  };
  return {
    o, scale: o.timeScale ?? 1,
    echo: o.echo ?? jsEchoCommand(o.echoScript),
    logStore: o.logStore ?? memoryLogStore(),
    prober: o.prober ?? buildHelperProber({ netns: o.nodeNetns, ...processes }),
    launcher: o.launcher ?? buildHelperLauncher(processes),
    netnses: o.sandboxNetns ?? buildSandboxNetns(),
    podNetwork: buildPodNetwork({
      exec: o.exec, nodeNetns: o.nodeNetns, ipamDir: o.ipamDir, podBridge: o.podBridge,
      confDir: o.cniConfDir, binDirs: o.cniBinDirs, ...(o.podMtu ? { mtu: o.podMtu } : {}),
    }),
    sandboxes: new Map(),
    ...notify,
  };
}

export function buildNetnsRuntime(o: NetnsRuntimeOptions): NetnsRuntime {
  let listener: (uid: string) => void = () => {};
  let eventListener: (uid: string, e: ContainerEvent) => void = () => {};
  const ctx = buildContext(o, { changed: (uid) => listener(uid), event: (uid, e) => eventListener(uid, e) });
  const { sandboxes, logStore } = ctx;
  /** Removed sandboxes: their logs stay readable and the runtime endpoint lists them not ready. */
  const retired = new Map<string, Sandbox>();
  const starting = new Map<string, Promise<RuntimePodStatus>>();
  const volumeSync = startVolumeSync(ctx);

  async function create(pod: Pod, net: NodeNetwork): Promise<RuntimePodStatus> {
    const sb = await createSandbox(ctx, pod, net);
    sandboxes.set(sb.uid, sb);
    await startNext(ctx, sb);
    return podStatus(sb);
  }

  function retire(sb: Sandbox): void {
    sandboxes.delete(sb.uid);
    retired.delete(sb.uid);
    retired.set(sb.uid, sb);
    if (retired.size > MAX_RETIRED) retired.delete(retired.keys().next().value!);
  }

  return {
    nodeInfo: { osImage: 'kdp netns node (Linux network namespaces)', kernelVersion: release() },
    runPod(pod, net) {
      const uid = pod.metadata.uid!;
      const sb = sandboxes.get(uid);
      if (sb) return Promise.resolve(podStatus(sb));
      let p = starting.get(uid);
      if (!p) {
        p = create(pod, net).finally(() => starting.delete(uid));
        starting.set(uid, p);
      }
      return p;
    },
    async stopPod(uid, graceMs) {
      await starting.get(uid)?.catch(() => undefined);
      const sb = sandboxes.get(uid);
      if (sb) await stopProcesses(ctx, sb, graceMs);
    },
    async killPod(uid) {
      await starting.get(uid)?.catch(() => undefined);
      const sb = sandboxes.get(uid);
      if (!sb) return;
      retire(sb);
      await stopProcesses(ctx, sb);
      await removeSandbox(ctx, sb);
    },
    podStatus: (uid) => {
      const sb = sandboxes.get(uid);
      return sb ? podStatus(sb) : undefined;
    },
    listPods: () => [...sandboxes.keys()],
    sandboxRecords: () => {
      const record = (sb: Sandbox, ready: boolean): RuntimeSandboxRecord => ({ pod: sb.pod,
        createdAtMs: sb.createdAtMs, ready, status: podStatus(sb), netns: sb.netns });
      return [...[...retired.values()].filter((sb) => !sandboxes.has(sb.uid)).map((sb) => record(sb, false)),
        ...[...sandboxes.values()].map((sb) => record(sb, true))];
    },
    podHolderPid: (uid) => sandboxes.get(uid)?.holder?.pid,
    containerPid: (uid, name) => sandboxes.get(uid)?.containers.get(name)?.child?.pid,
    containerEnv: (uid, name) => sandboxes.get(uid)?.containers.get(name)?.env,
    attachContainer: (uid, name, opts) => {
      const child = sandboxes.get(uid)?.containers.get(name)?.child as Partial<InteractiveWorkload> | undefined;
      return child?.attach?.(opts);
    },
    logStore,
    logs: (uid, container, previous) => storedLogText(logStore, uid, container, previous),
    onChange(l) { listener = l; },
    onEvent(l) { eventListener = l; },
    async close() {
      if (volumeSync) clearInterval(volumeSync);
      for (const sb of sandboxes.values()) {
        await stopProcesses(ctx, sb);
        await stopHolder(sb);
      }
      if (!o.prober) await ctx.prober.close();
      if (!o.launcher) await ctx.launcher.close();
      if (!o.sandboxNetns) ctx.netnses.close();
      ctx.podNetwork.close();
    },
  };
}

/** host-local's data dir for a node of the cluster in `dataDir`. */
export function ipamDirFor(dataDir: string, node: string): string {
  return join(dataDir, 'cni', node);
}
