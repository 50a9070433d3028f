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

import { createHash } from 'node:crypto';
import { constants as osConstants, release } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Container as Container_, Pod, ProbeHandler } from '../api/types.js';
import { jsEchoCommand, type EchoCommand } from './echo-command.js';
import { kdpError } from '../errors.js';
import type { HostExec } from '../host/exec.js';
import { recordProcess } from '../host/process.js';
import { hostSpawner, runProgram } from '../host/spawn.js';
import type { HostStateFile } from '../host/state.js';
import type {
  NodeNetwork, Runtime, RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxRecord,
} from './runtime.js';
import { containerIdUrl } from './runtime-endpoint/ids.js';
import { storedLogText } from './runtime.js';
import { buildRestartBackoff, type RestartBackoff } from './backoff.js';
import { memoryLogStore, type ContainerLogStore, type ContainerLogWriter } from './container-log-files.js';
import { buildPodNetwork } from './cni-caller.js';
import { buildHelperProber, type ProbeOutcome, type Prober } from './prober.js';
import { buildHelperLauncher, type Launcher, type Workload } from '../host/launcher.js';
import { containerEnv, expandVars, type EnvContext } from './container-env.js';
import { imageKind, resolveImage } from './images.js';
import { preparePodMounts, refreshPodVolumes, removePodDir, PODNS_SCRIPT, type PodMountDeps } from './pod-mounts.js';
import type { KubeletDnsConfig } from './resolv-conf.js';
import { startInteractive, type InteractiveWorkload } from './interactive.js';
import type { StreamOptions, StreamProcess } from './streams.js';
import { probeRequest, startReadinessWorker, type ReadinessWorker } from './readiness.js';
import type { ContainerEvent } from './container-events.js';
import { appsFinished, isSidecar, nextInitStep } from './sidecars.js';
import { buildSandboxNetns, type SandboxNetns } from '../host/netns.js';

export interface NetnsRuntimeOptions {
  readonly exec: HostExec;
  readonly state: HostStateFile;
  /** The cluster prefix (`kdp-<id>`); pod namespaces are `<prefix>-p-<hash>`. */
  readonly prefix: string;
  /** The node's namespace: where the CNI plugin runs. */
  readonly nodeNetns: string;
  /** host-local's data dir for this node. */
  readonly ipamDir: string;
  readonly podBridge?: string;
  /** CNI conf dir (first file by name); default: the built-in kdp-cni bridge network. */
  readonly cniConfDir?: string;
  /** CNI_PATH for exec'd plugins; default /usr/lib/cni. */
  readonly cniBinDirs?: readonly string[];
  /** The built-in network's pod MTU (cni-caller.ts); default the plugin's. */
  readonly podMtu?: number;
  readonly killGraceMs?: number;
  /** The workload program; default the JS echo (`echoScript`, default bin/kdp-echo.js). */
  readonly echo?: EchoCommand;
  readonly echoScript?: string;
  /** Probes from the node namespace; default a helper prober started there on first use. */
  readonly prober?: Prober;
  /** Starts workload processes; default a helper launcher of this runtime's own (host/launcher.ts). */
  readonly launcher?: Launcher;
  /** Makes and removes pod namespaces; default ip sessions of this runtime's own. */
  readonly sandboxNetns?: SandboxNetns;
  /** Multiplies probe periods and restart back-off (the agent's timeScale). Default 1. */
  readonly timeScale?: number;
  /** Called after CNI ADD gave a pod its IPs and before its sandbox and containers start (the
   *  node's NetworkPolicy controller programs the pod's verdicts here, so a pod a policy
   *  isolates is isolated from its first packet). A rejection fails the sandbox (CNI DEL, the
   *  kubelet's sync retries): no container starts unprogrammed. */
  readonly beforeContainers?: (pod: Pod, podIPs: readonly string[]) => Promise<void>;
  /** The node's IPs (status.hostIP(s) in env) and name. */
  readonly nodeIPs?: readonly string[];
  readonly nodeName?: string;
  /** ConfigMap/Secret data for env (configMapKeyRef, secretKeyRef, envFrom); absent: every
   *  such reference fails the container with CreateContainerConfigError. */
  readonly lookup?: (namespace: string, resource: 'configmaps' | 'secrets', name: string) =>
    Promise<Record<string, string> | undefined>;
  /** Where each pod's own files go (`<podsDir>/<uid>`): given, every pod gets its mount, UTS and
   *  IPC namespaces (pod-mounts.ts: hostname, /etc/resolv.conf and hosts, /tmp, volumes) and
   *  kdp/dns runs the DNS server; absent, containers share the host's files. */
  readonly podsDir?: string;
  /** The kubelet's DNS settings for each pod's resolv.conf (asked at each pod start). */
  readonly dns?: () => Promise<KubeletDnsConfig>;
  readonly volumeFiles?: PodMountDeps['volumeFiles'];
  /** The `kubernetes` Service's address: every container gets KUBERNETES_SERVICE_HOST/PORT and
   *  the link variables of it, as upstream's kubelet gives (in-cluster clients need them). */
  readonly apiService?: () => Promise<{ host: string; port: number } | undefined>;
  /** The Python that runs the namespace holder; default /usr/bin/python3, else python3. */
  readonly python?: string;
  /** Where containers' output goes (the node's CRI log files); default in memory. */
  readonly logStore?: ContainerLogStore;
}

/** Removed sandboxes whose logs are kept (a finished Job's pod stays readable with `kubectl
 *  logs`, as upstream keeps exited containers until the pod goes); oldest dropped first. */
const MAX_RETIRED = 256;

interface Container {
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

interface Sandbox {
  readonly uid: string;
  readonly pod: Pod;
  readonly netns: string;
  readonly net: NodeNetwork;
  /** When it was made (epoch ms; the runtime endpoint's createdAt). */
  readonly createdAtMs: number;
  podIPs: string[];
  readonly containers: Map<string, Container>;
  stopping: boolean;
  /** The app containers have been started (once every init container is done or started). */
  appsStarted?: boolean;
  /** The app containers have finished for good: the sidecars are stopping, not restarting. */
  sidecarsStopping?: boolean;
  /** The process holding the pod's mount/UTS/IPC namespaces (with `podsDir`). */
  holder?: Workload;
  podDir?: string;
}

export function podNetnsName(prefix: string, uid: string): string {
  return `${prefix}-p-${createHash('sha256').update(uid).digest('hex').slice(0, 10)}`;
}

/** A lifecycle hook's handler (upstream's LifecycleHandler: a probe handler or a sleep). */
type LifecycleHandler = ProbeHandler & { sleep?: { seconds?: number } };

/** The netns runtime also names the process whose namespaces exec enters. */
export interface NetnsRuntime extends Runtime {
  /** The pod's namespace holder's pid; undefined without per-pod mount namespaces. */
  podHolderPid(uid: string): number | undefined;
  /** The env the container was last started with (exec's env). */
  containerEnv(uid: string, container: string): Record<string, string | undefined> | undefined;
  /** A session on a stdin/tty container's stdio (attach); undefined for other containers. */
  attachContainer(uid: string, container: string, opts: StreamOptions): StreamProcess | undefined;
}

export function buildNetnsRuntime(o: NetnsRuntimeOptions): NetnsRuntime {
  const echo = o.echo ?? jsEchoCommand(o.echoScript);
  const logStore = o.logStore ?? memoryLogStore();
  const sandboxes = new Map<string, Sandbox>();
  /** Removed sandboxes: their logs stay readable and the runtime endpoint lists them not ready. */
  const retired = new Map<string, Sandbox>();
  const starting = new Map<string, Promise<RuntimePodStatus>>();
  let listener: (uid: string) => void = () => {};
  let eventListener: (uid: string, e: ContainerEvent) => void = () => {};
  const iso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const scale = o.timeScale ?? 1;
  // The kubelet's periodic volume sync (upstream syncFrequency, 1 min): ConfigMap and Secret edits
  // and renewed service-account tokens reach running pods' files (pod-mounts.ts).
  let volumeSyncing = false;
  const volumeSync = o.volumeFiles ? setInterval(() => {
    if (volumeSyncing) return;
    volumeSyncing = true;
    void (async () => {
      for (const sb of [...sandboxes.values()]) {
        if (sb.podDir) await refreshPodVolumes(sb.pod, sb.podDir, { volumeFiles: o.volumeFiles }).catch(() => undefined);
      }
    })().finally(() => { volumeSyncing = false; });
  }, 60_000 * scale) : undefined;
  volumeSync?.unref();
  const prober = o.prober ?? buildHelperProber({
    netns: o.nodeNetns,
    onSpawn: (pid) => o.state.addProcess(recordProcess(pid)),
    onExit: (pid) => o.state.removeProcess(pid),
  });
  const launcher = o.launcher ?? buildHelperLauncher({
    onSpawn: (pid) => o.state.addProcess(recordProcess(pid)),
    onExit: (pid) => o.state.removeProcess(pid),
  });
  const netnses = o.sandboxNetns ?? buildSandboxNetns();
  /** Removes a pod namespace and its record; one that could not go stays recorded, for host
   *  cleanup (close, `kdp down`) to remove. */
  const dropNetns = async (netns: string): Promise<void> => {
    if (await netnses.remove(netns).then(() => true, () => false)) await o.state.removeNetns(netns);
  };

  function status(sb: Sandbox): RuntimePodStatus {
    const all = [...sb.containers.values()];
    const inits = all.filter((c) => c.init);
    return { uid: sb.uid, podIPs: [...sb.podIPs], containers: all.filter((c) => !c.init).map((c) => ({ ...c.status })),
      ...(inits.length ? { initContainers: inits.map((c) => ({ ...c.status })) } : {}) };
  }

  /** The container's spec, app or init (names are unique across both, by validation). */
  function specOf(sb: Sandbox, name: string): Container_ | undefined {
    return sb.pod.spec?.containers?.find((c) => c.name === name)
      ?? sb.pod.spec?.initContainers?.find((c) => c.name === name);
  }

  /** nsenter's arguments that put a program in the pod's namespaces. */
  function nsEnter(sb: Sandbox, wd: string): string[] {
    return [...(sb.holder?.pid ? [`--target=${sb.holder.pid}`, '--net', '--mount', '--uts', '--ipc']
      : [`--net=/run/netns/${sb.netns}`]), `--wd=${wd}`];
  }

  /** Runs a probe's or hook's command in the container's namespaces with its env (argument array,
   *  no shell); exit 0 = ok, else the output is the message (as upstream's exec prober). */
  function execIn(sb: Sandbox, c: Container, argv: readonly string[], timeoutMs: number): Promise<ProbeOutcome> {
    if (argv.length === 0) return Promise.resolve({ ok: false, message: 'exec: no command' });
    return runProgram(hostSpawner, 'nsenter', [...nsEnter(sb, '/'), '--', ...argv], {
      env: c.env as NodeJS.ProcessEnv, timeoutMs, killSignal: 'SIGKILL', maxOutput: 1 << 20,
    }).then((r) => {
      if (r.code === 0) return { ok: true };
      const text = `${r.stdout}${r.stderr}`.trim();
      return { ok: false, message: r.timedOut
        ? `command ${JSON.stringify(argv)} timed out` : text || `command exited ${r.code ?? 'abnormally'}` };
    });
  }

  /** Stops one container as upstream's killContainer: its preStop exec hook first (within the
   *  grace period), then SIGTERM, SIGKILL when the grace period is over (at least 2 s, scaled,
   *  after a hook). Resolves once it has exited. */
  async function killContainer(sb: Sandbox, name: string, graceMs: number): Promise<void> {
    const c = sb.containers.get(name)!;
    const child = c.child;
    const gone = () => !child || child.exitCode !== null || child.signalCode !== null;
    if (gone()) return;
    const started = Date.now();
    const hook = specOf(sb, name)?.lifecycle?.preStop;
    if (hook) {
      const r = await runHook(sb, c, name, hook, Math.max(1, graceMs));
      // upstream records no output (it may hold secrets).
      if (!r.ok) eventListener(sb.uid, { type: 'Warning', reason: 'FailedPreStopHook', fieldPath: fieldPath(c, name),
        message: 'PreStopHook failed' });
    }
    if (gone()) return;
    const left = Math.max(graceMs - (Date.now() - started), hook ? 2000 * scale : 0);
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => child!.kill('SIGKILL'), left);
      child!.once('exit', () => { clearTimeout(t); resolve(); });
      child!.kill('SIGTERM');
    });
  }

  /** A lifecycle hook as upstream's handler runner: exec in the container, httpGet from the
   *  node's namespace (the pod IP by default), sleep (scaled); others do nothing. */
  function runHook(sb: Sandbox, c: Container, name: string, h: LifecycleHandler, timeoutMs: number):
    Promise<ProbeOutcome> {
    if (h.exec) return execIn(sb, c, h.exec.command ?? [], timeoutMs);
    if (h.sleep) {
      return new Promise((resolve) => {
        setTimeout(() => resolve({ ok: true }), Math.min(timeoutMs, (h.sleep!.seconds ?? 0) * 1000 * scale)).unref?.();
      });
    }
    const spec = specOf(sb, name);
    if (h.httpGet && spec) {
      const req = probeRequest({ httpGet: h.httpGet, timeoutSeconds: Math.ceil(timeoutMs / 1000) }, spec,
        sb.podIPs[0] ?? '');
      if (!req || 'fixed' in req) return Promise.resolve({ ok: false, message: 'hook port does not name a container port' });
      return prober.probe(req);
    }
    return Promise.resolve({ ok: true });
  }

  const fieldPath = (c: Container, name: string) => `spec.${c.init ? 'initContainers' : 'containers'}{${name}}`;

  /** Starts the next init container (a regular one once the one before completed, a sidecar
   *  once the one before started: sidecars.ts); once all are done, the app containers. */
  function startNext(sb: Sandbox): Promise<void> {
    if (sb.appsStarted || sb.stopping) return Promise.resolve();
    const all = [...sb.containers.entries()];
    const step = nextInitStep(all.filter(([, c]) => c.init).map(([name, c]) => ({ name, sidecar: !!c.sidecar,
      state: c.status.state, exitCode: c.status.exitCode, started: c.status.started,
      pending: !!c.launching || !!c.restartTimer, ran: !!c.ran })));
    if (step === 'wait') return Promise.resolve();
    if (step !== 'apps') return startContainer(sb, step.start);
    sb.appsStarted = true;
    return Promise.all(all.filter(([, c]) => !c.init).map(([n]) => startContainer(sb, n))).then(() => undefined);
  }

  /** Once the app containers have finished for good, the sidecars stop (reverse spec order, as
   *  at deletion); a regular init container that failed under Never ends the pod the same way. */
  function stopSidecarsIfDone(sb: Sandbox): void {
    if (sb.sidecarsStopping || sb.stopping) return;
    const all = [...sb.containers.values()];
    const initFailed = sb.pod.spec?.restartPolicy === 'Never'
      && all.some((c) => c.init && !c.sidecar && c.status.state === 'exited' && (c.status.exitCode ?? 0) !== 0);
    if (!initFailed && !(sb.appsStarted && appsFinished(sb.pod, all.filter((c) => !c.init).map((c) => c.status),
      (name) => !!sb.containers.get(name)?.restartTimer))) return;
    if (!all.some((c) => c.sidecar)) return;
    sb.sidecarsStopping = true;
    const grace = (sb.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000 * scale;
    void stopSidecars(sb, Date.now() + grace).then(() => listener(sb.uid));
  }

  /** Stops the pod's sidecars one at a time in reverse spec order, within the deadline. */
  async function stopSidecars(sb: Sandbox, deadline: number): Promise<void> {
    const sidecars = [...sb.containers.entries()].filter(([, c]) => c.sidecar).reverse();
    for (const [name, c] of sidecars) {
      clearTimeout(c.restartTimer);
      c.restartTimer = undefined;
      c.readiness?.stop();
      c.liveness?.stop();
      c.startup?.stop();
      await killContainer(sb, name, Math.max(0, deadline - Date.now()));
    }
  }

  const podNetwork = buildPodNetwork({
    exec: o.exec, nodeNetns: o.nodeNetns, ipamDir: o.ipamDir, podBridge: o.podBridge,
    confDir: o.cniConfDir, binDirs: o.cniBinDirs, ...(o.podMtu ? { mtu: o.podMtu } : {}),
  });

  /** CNI through the node's network config list (kubelet/cni-caller.ts); ADD returns the result JSON. */
  async function cni(command: 'ADD' | 'DEL', pod: Pod, netns: string, net: NodeNetwork): Promise<string> {
    const target = {
      uid: pod.metadata.uid!, namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name!,
      netns, podCIDRs: net.podCIDRs,
    };
    if (command === 'DEL') {
      await podNetwork.detach(target);
      return '';
    }
    return JSON.stringify(await podNetwork.attach(target));
  }

  /** The argv and env the container runs (Docker's rules through images.ts). */
  async function containerProgram(sb: Sandbox, name: string):
    Promise<{ file: string; args: string[]; env: Record<string, string | undefined>; warning?: string }> {
    const spec = specOf(sb, name)!;
    const ns = sb.pod.metadata.namespace ?? 'default';
    const ctx: EnvContext = {
      podIPs: sb.podIPs, hostIPs: o.nodeIPs ?? (sb.pod.status?.hostIP ? [sb.pod.status.hostIP] : []),
      nodeName: o.nodeName,
      ...(o.lookup ? { lookup: (resource, n) => o.lookup!(ns, resource, n) } : {}),
    };
    const vars = await containerEnv(sb.pod, spec, ctx);
    const expanded = {
      ...spec,
      ...(spec.command ? { command: spec.command.map((a) => expandVars(a, vars)) } : {}),
      ...(spec.args ? { args: spec.args.map((a) => expandVars(a, vars)) } : {}),
    };
    const prog = resolveImage(expanded, { echo, runDns: !!sb.holder });
    const api = await o.apiService?.().catch(() => undefined);
    const apiEnv: Record<string, string> = api ? {
      KUBERNETES_SERVICE_HOST: api.host, KUBERNETES_SERVICE_PORT: String(api.port),
      KUBERNETES_SERVICE_PORT_HTTPS: String(api.port),
      KUBERNETES_PORT: `tcp://${api.host.includes(':') ? `[${api.host}]` : api.host}:${api.port}`,
      [`KUBERNETES_PORT_${api.port}_TCP`]: `tcp://${api.host.includes(':') ? `[${api.host}]` : api.host}:${api.port}`,
      [`KUBERNETES_PORT_${api.port}_TCP_PROTO`]: 'tcp', [`KUBERNETES_PORT_${api.port}_TCP_PORT`]: String(api.port),
      [`KUBERNETES_PORT_${api.port}_TCP_ADDR`]: api.host,
    } : {};
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOSTNAME: sb.pod.spec?.hostname || sb.pod.metadata.name, HOME: '/root',
      ...(spec.tty ? { TERM: 'xterm' } : {}),
      KDP_POD_NAME: sb.pod.metadata.name,
      ...apiEnv,
      ...prog.env,
      ...Object.fromEntries(vars),
    };
    return { file: prog.file, args: [...prog.args], env, ...(prog.warning ? { warning: prog.warning } : {}) };
  }

  /** Resolves once the container runs or waits with a config error (callers then publish). */
  function startContainer(sb: Sandbox, name: string): Promise<void> {
    const c = sb.containers.get(name)!;
    c.launching = true;
    return containerProgram(sb, name).then((prog) => {
      c.launching = false;
      if (sb.stopping || sandboxes.get(sb.uid) !== sb) return;
      if (prog.warning && !c.warned) {
        c.warned = true;
        eventListener(sb.uid, { type: 'Warning', reason: 'ImageNotEmulated', fieldPath: fieldPath(c, name),
          message: prog.warning });
      }
      runContainer(sb, name, prog);
    }, (e: Error) => {
      c.launching = false;
      // upstream: the container waits with CreateContainerConfigError and the sync retries.
      if (sb.stopping || sandboxes.get(sb.uid) !== sb) return;
      c.status = { ...c.status, state: 'waiting', ready: false, reason: 'CreateContainerConfigError', message: e.message };
      eventListener(sb.uid, { type: 'Warning', reason: 'Failed', fieldPath: fieldPath(c, name),
        message: `Error: ${e.message}` });
      c.restartTimer = setTimeout(() => {
        c.restartTimer = undefined;
        if (!sb.stopping && sandboxes.get(sb.uid) === sb) void startContainer(sb, name).then(() => listener(sb.uid));
      }, 2000 * scale);
      c.restartTimer.unref?.();
    });
  }

  function runContainer(sb: Sandbox, name: string,
    prog: { file: string; args: string[]; env: Record<string, string | undefined> }): void {
    const spec = specOf(sb, name);
    const c = sb.containers.get(name)!;
    c.env = prog.env;
    // Each run writes its own file (named by its restart count); the kubelet keeps this run and
    // the previous one, as upstream's container GC keeps one dead container.
    c.logWriter?.close();
    const run = c.status.restartCount;
    const meta = sb.pod.metadata;
    const writer = c.logWriter = logStore.open({ namespace: meta.namespace ?? 'default', name: meta.name!, uid: sb.uid },
      name, run);
    for (const old of logStore.runs(sb.uid, name)) if (old < run - 1) logStore.removeRun(sb.uid, name, old);
    const isEcho = imageKind(spec?.image) === 'echo' && !(spec?.command?.length);
    // nsenter, not `ip netns exec`: the workload needs no /sys of its own, and skipping the mount
    // namespace and sysfs remount halves the launch time.
    const nsArgs = [...nsEnter(sb, spec?.workingDir || '/'), '--', prog.file, ...prog.args];
    // stdin/tty containers are fed by attach sessions (interactive.ts); others start from the
    // launcher helpers.
    const child: Workload = spec?.stdin || spec?.tty
      ? startInteractive(['nsenter', ...nsArgs], prog.env,
        { tty: !!spec.tty, stdin: !!spec.stdin, stdinOnce: !!spec.stdinOnce })
      : launcher.launch({ file: 'nsenter', args: nsArgs, env: prog.env });
    child.once('spawn', (pid: number) => { void o.state.addProcess(recordProcess(pid)); });
    c.child = child;
    c.ran = true;
    // Without a probe a container is ready once running (upstream); the echo says when it listens.
    // Regular init containers take no probes nor hooks (upstream validation) and are ready once
    // completed; sidecars take both, as app containers do.
    const plainInit = c.init && !c.sidecar;
    const probe = plainInit ? undefined : spec?.readinessProbe;
    // A startup probe holds readiness and liveness back until it has succeeded (upstream's
    // `started`); failureThreshold failures before that kill the container as liveness does.
    const startup = plainInit ? undefined : spec?.startupProbe;
    // A sidecar with a postStart hook has started once the hook is done (upstream runs the hook
    // before it starts the next container).
    const sidecarHook = !!c.sidecar && !startup && !!spec?.lifecycle?.postStart;
    // Each run is a new container (its own ID), as a CRI runtime's.
    c.status = { ...c.status, state: 'running', reason: undefined, message: undefined, startedAt: iso(),
      containerID: containerIdUrl(sb.uid, name, c.status.restartCount),
      ready: !plainInit && !probe && !isEcho && !startup, started: !plainInit && !startup && !sidecarHook };
    const exec = (argv: readonly string[], ms: number) => execIn(sb, c, argv, ms);
    let listening = false;
    const failed = (kind: string, grace?: number) => {
      if (c.child !== child || sb.stopping) return;
      c.liveness?.stop();
      c.startup?.stop();
      eventListener(sb.uid, { type: 'Normal', reason: 'Killing', fieldPath: fieldPath(c, name),
        message: `Container ${name} failed ${kind} probe, will be restarted` });
      void killContainer(sb, name, (grace ?? sb.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000 * scale);
    };
    c.readiness?.stop();
    c.liveness?.stop();
    c.startup?.stop();
    c.startup = undefined;
    let startupFailures = 0;
    if (startup && spec) {
      c.startup = startReadinessWorker({
        probe: startup, container: spec, podIP: () => sb.podIPs[0], prober, timeScale: scale, exec,
        onChange: (ok) => {
          if (!ok || c.child !== child) return;
          c.startup?.stop();
          c.startup = undefined;
          c.status = { ...c.status, started: true, ready: !probe && (!isEcho || listening) };
          startProbes();
          listener(sb.uid);
          // A started sidecar lets the next init container (or the app containers) start.
          if (c.sidecar) void startNext(sb).then(() => listener(sb.uid));
        },
        onFailure: (message) => {
          if (c.child !== child) return;
          eventListener(sb.uid, { type: 'Warning', reason: 'Unhealthy', fieldPath: fieldPath(c, name),
            message: `Startup probe failed: ${message}` });
          if (++startupFailures >= Math.max(1, startup.failureThreshold ?? 3)) {
            failed('startup', startup.terminationGracePeriodSeconds);
          }
        },
      });
    } else startProbes();
    // A sidecar without a startup probe has started: the next init container (or the apps) may.
    if (c.sidecar && c.status.started) void startNext(sb).then(() => listener(sb.uid));
    function startProbes(): void {
      c.readiness = probe && spec ? startReadinessWorker({
        probe, container: spec, podIP: () => sb.podIPs[0], prober, timeScale: scale, exec,
        onChange: (ready) => {
          if (c.child !== child) return;
          c.status = { ...c.status, ready };
          listener(sb.uid);
        },
        onFailure: (message) => {
          if (c.child !== child) return;
          eventListener(sb.uid, { type: 'Warning', reason: 'Unhealthy', fieldPath: fieldPath(c, name),
            message: `Readiness probe failed: ${message}` });
        },
      }) : undefined;
      // Liveness (upstream's prober worker with an initial success): failureThreshold failures in a
      // row kill the container (preStop, SIGTERM, grace) and the restart policy decides what next.
      const live = plainInit ? undefined : spec?.livenessProbe;
      c.liveness = live && spec ? startReadinessWorker({
        probe: live, container: spec, podIP: () => sb.podIPs[0], prober, timeScale: scale, exec, initial: true,
        onChange: (alive) => { if (!alive) failed('liveness', live.terminationGracePeriodSeconds); },
        onFailure: (message) => {
          if (c.child !== child) return;
          eventListener(sb.uid, { type: 'Warning', reason: 'Unhealthy', fieldPath: fieldPath(c, name),
            message: `Liveness probe failed: ${message}` });
        },
      }) : undefined;
    }
    // postStart runs beside the program (upstream runs it right after the start); a failed one is
    // a FailedPostStartHook Warning and the container is killed, the restart policy deciding next.
    const post = plainInit ? undefined : spec?.lifecycle?.postStart;
    if (post) {
      const grace = (sb.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000 * scale;
      void runHook(sb, c, name, post, Math.max(grace, 30_000 * scale)).then((r) => {
        if (c.child !== child || sb.stopping) return;
        if (r.ok) {
          if (!sidecarHook) return;
          c.status = { ...c.status, started: true };
          listener(sb.uid);
          void startNext(sb).then(() => listener(sb.uid));
          return;
        }
        eventListener(sb.uid, { type: 'Warning', reason: 'FailedPostStartHook', fieldPath: fieldPath(c, name),
          message: `PostStartHook failed: ${r.message ?? ''}`.trim() });
        c.liveness?.stop();
        c.startup?.stop();
        void killContainer(sb, name, grace);
      });
    }
    // The echo's `ready` line, whole even when a chunk ends mid-line (a line's tail is bounded).
    let partial = '';
    child.on('data', (chunk: string, stream?: 'stdout' | 'stderr') => {
      writer.write(stream === 'stderr' ? 'stderr' : 'stdout', chunk);
      const lines = (partial + chunk).split('\n');
      partial = (lines.pop() ?? '').slice(-4096);
      for (const l of lines) {
        if (!isEcho || !l.startsWith('ready ') || c.child !== child) continue;
        listening = true;
        if (c.startup) c.startup.trigger();
        else if (c.readiness) c.readiness.trigger();
        else if (!c.status.ready) {
          c.status = { ...c.status, ready: true };
          listener(sb.uid);
        }
      }
    });
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      partial = '';
      writer.close();
      if (child.pid) o.state.removeProcess(child.pid);
      if (c.child !== child) return;
      c.child = undefined;
      c.readiness?.stop();
      c.readiness = undefined;
      c.liveness?.stop();
      c.liveness = undefined;
      c.startup?.stop();
      c.startup = undefined;
      const exitCode = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
      c.status = {
        ...c.status, state: 'exited', ready: false, exitCode, finishedAt: iso(),
        reason: exitCode === 0 ? 'Completed' : 'Error',
      };
      if (sb.stopping || sandboxes.get(sb.uid) !== sb) return;
      const policy = sb.pod.spec?.restartPolicy ?? 'Always';
      if (c.sidecar) {
        // A sidecar is restarted whenever it exits, until the app containers are done.
        if (!sb.sidecarsStopping) scheduleRestart(sb, name);
        listener(sb.uid);
        return;
      }
      if (c.init) {
        // Completed: the next one (or the app containers) starts. Failed: restarted with back-off
        // unless the policy is Never (the pod then fails); Always restarts it as OnFailure.
        if (exitCode === 0) {
          c.status = { ...c.status, ready: true };
          void startNext(sb).then(() => listener(sb.uid));
        } else if (policy !== 'Never') scheduleRestart(sb, name);
        else stopSidecarsIfDone(sb);
        listener(sb.uid);
        return;
      }
      if (policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)) scheduleRestart(sb, name);
      stopSidecarsIfDone(sb);
      listener(sb.uid);
    });
  }

  /** Restarts an exited container after the back-off; waits in CrashLoopBackOff meanwhile. */
  function scheduleRestart(sb: Sandbox, name: string): void {
    const c = sb.containers.get(name)!;
    const last = c.status;
    const waitMs = c.backoff.next(Date.now());
    c.status = {
      ...last, state: 'waiting', ready: false,
      lastTerminated: {
        exitCode: last.exitCode ?? 0, reason: last.reason ?? 'Error', startedAt: last.startedAt,
        finishedAt: last.finishedAt, containerID: last.containerID,
      },
      reason: waitMs > 0 ? 'CrashLoopBackOff' : 'ContainerCreating',
      message: waitMs > 0 ? `back-off ${Math.round(waitMs / 1000 / scale)}s restarting failed ` +
        `container=${name} pod=${sb.pod.metadata.name}_${sb.pod.metadata.namespace ?? 'default'}` +
        `(${sb.uid})` : undefined,
    };
    c.restartTimer = setTimeout(() => {
      c.restartTimer = undefined;
      if (sb.stopping || sandboxes.get(sb.uid) !== sb) return;
      c.status = { ...c.status, restartCount: c.status.restartCount + 1 };
      void startContainer(sb, name).then(() => listener(sb.uid));
    }, waitMs);
    c.restartTimer.unref?.();
  }

  async function create(pod: Pod, net: NodeNetwork): Promise<RuntimePodStatus> {
    const uid = pod.metadata.uid!;
    if (net.podCIDRs.length === 0) throw kdpError('KDP_UNAVAILABLE', 'node has no podCIDR yet');
    const netns = podNetnsName(o.prefix, uid);
    await o.state.addNetns(netns);
    let result: { ips?: Array<{ address: string }> };
    try {
      await netnses.ensure(netns);
      result = JSON.parse(await cni('ADD', pod, netns, net));
    } catch (e) {
      await dropNetns(netns);
      throw e;
    }
    const sb: Sandbox = {
      uid, pod, netns, net, createdAtMs: Date.now(), podIPs: (result.ips ?? []).map((i) => i.address.split('/')[0]!),
      containers: new Map(), stopping: false,
    };
    if (o.beforeContainers) {
      try {
        await o.beforeContainers(pod, sb.podIPs);
      } catch (e) {
        eventListener(uid, { type: 'Warning', reason: 'FailedCreatePodSandBox', fieldPath: '',
          message: `Failed to create pod sandbox: network policy not programmed: ${(e as Error).message}` });
        await cni('DEL', pod, netns, net).catch(() => undefined);
        await dropNetns(netns);
        throw e;
      }
    }
    if (o.podsDir) {
      try {
        await startHolder(sb, join(o.podsDir, uid));
      } catch (e) {
        // Said on the pod, as upstream's kubelet does when a sandbox or its mounts fail (the
        // sync retries).
        eventListener(uid, { type: 'Warning', reason: 'FailedCreatePodSandBox', fieldPath: '',
          message: `Failed to create pod sandbox: ${(e as Error).message}` });
        await cni('DEL', pod, netns, net).catch(() => undefined);
        await dropNetns(netns);
        if (sb.podDir) removePodDir(sb.podDir);
        throw e;
      }
    }
    // Init containers first, in spec order; until they have all completed every container waits
    // in PodInitializing (upstream's reason).
    const inits = pod.spec?.initContainers ?? [];
    for (const [init, spec] of [...inits.map((s) => [true, s] as const),
      ...(pod.spec?.containers ?? []).map((s) => [false, s] as const)]) {
      sb.containers.set(spec.name, {
        backoff: buildRestartBackoff(scale), init, sidecar: init && isSidecar(spec), status: {
          name: spec.name, state: 'waiting', reason: inits.length ? 'PodInitializing' : 'ContainerCreating', ready: false,
          restartCount: 0, containerID: containerIdUrl(uid, spec.name, 0), imageID: spec.image ?? '',
        },
      });
    }
    sandboxes.set(uid, sb);
    await startNext(sb);
    return status(sb);
  }

  /** Starts the pod's namespace holder (pod-mounts.ts); resolves once it is ready. */
  async function startHolder(sb: Sandbox, podDir: string): Promise<void> {
    sb.podDir = podDir;
    const dns = o.dns ? await o.dns() : { clusterDNS: [], clusterDomain: 'cluster.local' };
    const args = await preparePodMounts(sb.pod, sb.podIPs, podDir, { dns, volumeFiles: o.volumeFiles });
    const python = o.python ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
    const holder = launcher.launch({
      file: 'nsenter',
      args: [`--net=/run/netns/${sb.netns}`, '--', 'unshare', '--mount', '--uts', '--ipc', '--propagation', 'private',
        '--', python, PODNS_SCRIPT, ...args],
      env: { PATH: process.env.PATH },
    });
    holder.once('spawn', (pid: number) => { void o.state.addProcess(recordProcess(pid)); });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const onData = (d: string) => {
        out += d;
        if (/^ready$/m.test(out)) { holder.off('data', onData); resolve(); }
      };
      holder.on('data', onData);
      holder.once('exit', (code) => reject(kdpError('KDP_HOST_EXEC',
        `pod ${sb.pod.metadata.namespace ?? 'default'}/${sb.pod.metadata.name}: its namespaces could not be set ` +
        `up (exit ${code}): ${out.trim().slice(0, 500)}`)));
    });
    holder.on('exit', () => { if (holder.pid) o.state.removeProcess(holder.pid); });
    sb.holder = holder;
  }

  async function stopHolder(sb: Sandbox): Promise<void> {
    const h = sb.holder;
    if (h && h.exitCode === null && h.signalCode === null) {
      await new Promise<void>((resolve) => { h.once('exit', () => resolve()); h.kill('SIGKILL'); });
    }
    if (sb.podDir) removePodDir(sb.podDir);
  }

  /** Stops every container within the grace period: the app (and running init) containers
   *  together, then the sidecars one at a time in reverse spec order (upstream, KEP-753). */
  async function stopProcesses(sb: Sandbox, graceMs = o.killGraceMs ?? 2000): Promise<void> {
    sb.stopping = true;
    const deadline = Date.now() + graceMs;
    for (const c of sb.containers.values()) {
      clearTimeout(c.restartTimer);
      c.readiness?.stop();
      c.liveness?.stop();
      c.startup?.stop();
    }
    await Promise.all([...sb.containers.entries()].filter(([, c]) => !c.sidecar)
      .map(([name]) => killContainer(sb, name, graceMs)));
    await stopSidecars(sb, deadline);
  }

  return {
    nodeInfo: { osImage: 'kdp netns node (Linux network namespaces)', kernelVersion: release() },
    runPod(pod, net) {
      const uid = pod.metadata.uid!;
      const sb = sandboxes.get(uid);
      if (sb) return Promise.resolve(status(sb));
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
      if (sb) await stopProcesses(sb, graceMs);
    },
    async killPod(uid) {
      await starting.get(uid)?.catch(() => undefined);
      const sb = sandboxes.get(uid);
      if (!sb) return;
      sandboxes.delete(uid);
      retired.delete(uid);
      retired.set(uid, sb);
      if (retired.size > MAX_RETIRED) retired.delete(retired.keys().next().value!);
      await stopProcesses(sb);
      await stopHolder(sb);
      await cni('DEL', sb.pod, sb.netns, sb.net).catch(() => undefined);
      await dropNetns(sb.netns);
    },
    podStatus: (uid) => {
      const sb = sandboxes.get(uid);
      return sb ? status(sb) : undefined;
    },
    listPods: () => [...sandboxes.keys()],
    sandboxRecords: () => {
      const record = (sb: Sandbox, ready: boolean): RuntimeSandboxRecord => ({ pod: sb.pod, createdAtMs: sb.createdAtMs,
        ready, status: status(sb), netns: sb.netns });
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
        await stopProcesses(sb);
        await stopHolder(sb);
      }
      if (!o.prober) await prober.close();
      if (!o.launcher) await launcher.close();
      if (!o.sandboxNetns) netnses.close();
      podNetwork.close();
    },
  };
}

/** host-local's data dir for a node of the cluster in `dataDir`. */
export function ipamDirFor(dataDir: string, node: string): string {
  return join(dataDir, 'cni', node);
}
