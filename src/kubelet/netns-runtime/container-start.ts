// Starting containers: init containers first, one at a time in spec order (sidecars.ts says
// which may start), then the app containers; each run a process in the pod's namespaces started
// with `nsenter` by the launcher helpers (host/launcher.ts), or under interactive.ts for
// stdin/tty containers (attach); its output to the node's log files; its probes
// (container-probes.ts); its exit through the restart policy (container-exit.ts) and upstream's
// back-off (backoff.ts). A restart keeps the last run's output for `logs --previous`.

import type { Workload } from '../../host/launcher.js';
import { recordProcess } from '../../host/process.js';
import type { ContainerLogWriter } from '../container-log-files.js';
import { imageKind } from '../images.js';
import { startInteractive } from '../interactive.js';
import { containerIdUrl } from '../runtime-endpoint/ids.js';
import { nextInitStep } from '../sidecars.js';
import { exitAction, recordExit, restartWaitStatus } from './container-exit.js';
import { echoListening, initialReadiness, startProbes } from './container-probes.js';
import { containerProgram, type ContainerProgram } from './container-program.js';
import { nsEnter } from './in-container.js';
import {
  fieldPath, isLive, isoNow, specOf, type ContainerRun, type NetnsPods, type Sandbox,
} from './pods.js';
import { stopSidecarsIfDone } from './termination.js';

/** Starts the next init container (a regular one once the one before completed, a sidecar
 *  once the one before started: sidecars.ts); once all are done, the app containers. */
export function startNext(ctx: NetnsPods, sb: Sandbox): Promise<void> {
  if (sb.appsStarted || sb.stopping) return Promise.resolve();
  const all = [...sb.containers.entries()];
  const step = nextInitStep(all.filter(([, c]) => c.init).map(([name, c]) => ({ name, sidecar: !!c.sidecar,
    state: c.status.state, exitCode: c.status.exitCode, started: c.status.started,
    pending: !!c.launching || !!c.restartTimer, ran: !!c.ran })));
  if (step === 'wait') return Promise.resolve();
  if (step !== 'apps') return startContainer(ctx, sb, step.start);
  sb.appsStarted = true;
  return Promise.all(all.filter(([, c]) => !c.init).map(([n]) => startContainer(ctx, sb, n)))
    .then(() => undefined);
}

/** Resolves once the container runs or waits with a config error (callers then publish). */
export function startContainer(ctx: NetnsPods, sb: Sandbox, name: string): Promise<void> {
  const c = sb.containers.get(name)!;
  c.launching = true;
  return containerProgram(ctx, sb, name).then((prog) => {
    c.launching = false;
    if (!isLive(ctx, sb)) return;
    if (prog.warning && !c.warned) {
      c.warned = true;
      ctx.event(sb.uid, { type: 'Warning', reason: 'ImageNotEmulated', fieldPath: fieldPath(c, name),
        message: prog.warning });
    }
    runContainer(ctx, sb, name, prog);
  }, (e: Error) => {
    c.launching = false;
    // upstream: the container waits with CreateContainerConfigError and the sync retries.
    if (!isLive(ctx, sb)) return;
    c.status = { ...c.status, state: 'waiting', ready: false, reason: 'CreateContainerConfigError',
      message: e.message };
    ctx.event(sb.uid, { type: 'Warning', reason: 'Failed', fieldPath: fieldPath(c, name),
      message: `Error: ${e.message}` });
    startLater(ctx, sb, name, 2000 * ctx.scale);
  });
}

/** Starts the container again after `ms` (its restart timer), if the sandbox still runs. */
function startLater(ctx: NetnsPods, sb: Sandbox, name: string, ms: number, before?: () => void): void {
  const c = sb.containers.get(name)!;
  c.restartTimer = setTimeout(() => {
    c.restartTimer = undefined;
    if (!isLive(ctx, sb)) return;
    before?.();
    void startContainer(ctx, sb, name).then(() => ctx.changed(sb.uid));
  }, ms);
  c.restartTimer.unref?.();
}

/** Restarts an exited container after the back-off; waits in CrashLoopBackOff meanwhile. */
export function scheduleRestart(ctx: NetnsPods, sb: Sandbox, name: string): void {
  const c = sb.containers.get(name)!;
  const waitMs = c.backoff.next(Date.now());
  c.status = restartWaitStatus(sb, name, c.status, waitMs, ctx.scale);
  startLater(ctx, sb, name, waitMs, () => {
    c.status = { ...c.status, restartCount: c.status.restartCount + 1 };
  });
}

/** Each run writes its own log file (named by its restart count); the kubelet keeps this run and
 *  the previous one, as upstream's container GC keeps one dead container. */
function openRunLog(ctx: NetnsPods, sb: Sandbox, name: string): ContainerLogWriter {
  const c = sb.containers.get(name)!;
  c.logWriter?.close();
  const run = c.status.restartCount;
  const meta = sb.pod.metadata;
  c.logWriter = ctx.logStore.open({ namespace: meta.namespace ?? 'default', name: meta.name!, uid: sb.uid },
    name, run);
  for (const old of ctx.logStore.runs(sb.uid, name)) if (old < run - 1) ctx.logStore.removeRun(sb.uid, name, old);
  return c.logWriter;
}

/** Starts the program in the pod's namespaces. nsenter, not `ip netns exec`: the workload needs
 *  no /sys of its own, and skipping the mount namespace and sysfs remount halves the launch
 *  time. stdin/tty containers are fed by attach sessions (interactive.ts). */
function spawnWorkload(ctx: NetnsPods, sb: Sandbox, name: string, prog: ContainerProgram): Workload {
  const spec = specOf(sb, name);
  const nsArgs = [...nsEnter(sb, spec?.workingDir || '/'), '--', prog.file, ...prog.args];
  const child: Workload = spec?.stdin || spec?.tty
    ? startInteractive(['nsenter', ...nsArgs], prog.env,
      { tty: !!spec.tty, stdin: !!spec.stdin, stdinOnce: !!spec.stdinOnce })
    : ctx.launcher.launch({ file: 'nsenter', args: nsArgs, env: prog.env });
  child.once('spawn', (pid: number) => { void ctx.o.state.addProcess(recordProcess(pid)); });
  return child;
}

/** One run: its log, its process, its status (a new container ID), probes, output and exit. */
function runContainer(ctx: NetnsPods, sb: Sandbox, name: string, prog: ContainerProgram): void {
  const spec = specOf(sb, name);
  const c = sb.containers.get(name)!;
  c.env = prog.env;
  const writer = openRunLog(ctx, sb, name);
  const child = spawnWorkload(ctx, sb, name, prog);
  c.child = child;
  c.ran = true;
  const run: ContainerRun = {
    sb, name, c, spec, child, listening: false,
    isEcho: imageKind(spec?.image) === 'echo' && !(spec?.command?.length),
    plainInit: !!c.init && !c.sidecar,
    startNext: () => { void startNext(ctx, sb).then(() => ctx.changed(sb.uid)); },
  };
  c.status = { ...c.status, state: 'running', reason: undefined, message: undefined, startedAt: isoNow(),
    containerID: containerIdUrl(sb.uid, name, c.status.restartCount), ...initialReadiness(run) };
  startProbes(ctx, run);
  watchOutput(ctx, run, writer);
}

/** The run's output to its log file, the echo's `ready` line (whole even when a chunk ends
 *  mid-line; a line's tail is bounded), and its exit. */
function watchOutput(ctx: NetnsPods, run: ContainerRun, writer: ContainerLogWriter): void {
  const { child } = run;
  let partial = '';
  child.on('data', (chunk: string, stream?: 'stdout' | 'stderr') => {
    writer.write(stream === 'stderr' ? 'stderr' : 'stdout', chunk);
    const lines = (partial + chunk).split('\n');
    partial = (lines.pop() ?? '').slice(-4096);
    for (const l of lines) {
      if (run.isEcho && l.startsWith('ready ') && run.c.child === child) echoListening(ctx, run);
    }
  });
  child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
    partial = '';
    writer.close();
    if (child.pid) ctx.o.state.removeProcess(child.pid);
    containerExited(ctx, run, code, signal);
  });
}

/** The run ended: its status, then what the restart policy says (container-exit.ts). */
function containerExited(ctx: NetnsPods, run: ContainerRun, code: number | null,
  signal: NodeJS.Signals | null): void {
  const { sb, c, name } = run;
  const exitCode = recordExit(run, code, signal);
  if (exitCode === undefined || !isLive(ctx, sb)) return;
  const next = exitAction(sb, c, exitCode);
  if (next.markReady) c.status = { ...c.status, ready: true };
  if (next.restart) scheduleRestart(ctx, sb, name);
  if (next.startNext) void startNext(ctx, sb).then(() => ctx.changed(sb.uid));
  if (next.checkSidecars) stopSidecarsIfDone(ctx, sb);
  ctx.changed(sb.uid);
}
