// A run's probes and postStart hook, as upstream's prober workers and handler runner. Without a
// probe a container is ready once running; the echo once it prints `ready`; with a readiness
// probe when the probe says so (readiness.ts: tcp/http from the node namespace by the node's
// Prober, exec inside the container's namespaces). A startup probe holds readiness and liveness
// back until it has succeeded (upstream's `started`). A liveness probe that fails
// failureThreshold times (or a startup probe before it has ever passed, or a failed postStart
// hook) kills the container the way deletion does; the restart policy decides what next.
// Regular init containers take no probes nor hooks; sidecars take both, as app containers do.

import type { Probe } from '../../api/types.js';
import { startReadinessWorker, type ReadinessWorker } from '../readiness.js';
import { execIn, runHook } from './in-container.js';
import {
  fieldPath, isCurrent, podGraceMs, stopProbeWorkers, type ContainerRun, type NetnsPods,
} from './pods.js';
import { killContainer } from './termination.js';

const readinessProbe = (run: ContainerRun) => (run.plainInit ? undefined : run.spec?.readinessProbe);
const startupProbe = (run: ContainerRun) => (run.plainInit ? undefined : run.spec?.startupProbe);
const postStartHook = (run: ContainerRun) => (run.plainInit ? undefined : run.spec?.lifecycle?.postStart);

/** `ready` and `started` as the run begins: ready at once without any probe (the echo waits for
 *  its line); started at once unless a startup probe, or a sidecar's postStart hook (upstream
 *  runs the hook before it starts the next container), has to pass first. */
export function initialReadiness(run: ContainerRun): { ready: boolean; started: boolean } {
  const startup = startupProbe(run);
  const sidecarHook = !!run.c.sidecar && !startup && !!run.spec?.lifecycle?.postStart;
  return {
    ready: !run.plainInit && !readinessProbe(run) && !run.isEcho && !startup,
    started: !run.plainInit && !startup && !sidecarHook,
  };
}

/** Starts the run's probe workers (the startup probe's, or readiness and liveness) and its
 *  postStart hook; a sidecar that has started lets the next container start. */
export function startProbes(ctx: NetnsPods, run: ContainerRun): void {
  stopProbeWorkers(run.c);
  run.c.startup = undefined;
  if (startupProbe(run) && run.spec) run.c.startup = startupWorker(ctx, run, startupProbe(run)!);
  else startReadinessAndLiveness(ctx, run);
  if (run.c.sidecar && run.c.status.started) run.startNext();
  runPostStart(ctx, run);
}

interface ProbeWatch {
  readonly probe: Probe;
  /** `Startup`, `Readiness`, `Liveness`: the Unhealthy Event's words. */
  readonly kind: string;
  onChange(ok: boolean): void;
  /** Starts as succeeded (liveness). */
  readonly initial?: boolean;
  /** After a failure of the current run has been recorded. */
  afterFailure?(): void;
}

/** A worker of one probe with the run's pod IP, prober, time scale and exec; each failure of
 *  the current run is an Unhealthy Warning. */
function probeWorker(ctx: NetnsPods, run: ContainerRun, w: ProbeWatch): ReadinessWorker {
  return startReadinessWorker({
    probe: w.probe, container: run.spec!, podIP: () => run.sb.podIPs[0], prober: ctx.prober,
    timeScale: ctx.scale, exec: (argv, ms) => execIn(run.sb, run.c, argv, ms),
    ...(w.initial ? { initial: true } : {}),
    onChange: (ok) => w.onChange(ok),
    onFailure: (message) => {
      if (!isCurrent(run)) return;
      ctx.event(run.sb.uid, { type: 'Warning', reason: 'Unhealthy', fieldPath: fieldPath(run.c, run.name),
        message: `${w.kind} probe failed: ${message}` });
      w.afterFailure?.();
    },
  });
}

/** The startup probe: once it passes the container has started (and is ready unless a readiness
 *  probe or the echo's line says otherwise); failureThreshold failures kill it. */
function startupWorker(ctx: NetnsPods, run: ContainerRun, startup: Probe): ReadinessWorker {
  const { c } = run;
  let failures = 0;
  return probeWorker(ctx, run, {
    probe: startup, kind: 'Startup',
    onChange: (ok) => {
      if (!ok || !isCurrent(run)) return;
      c.startup?.stop();
      c.startup = undefined;
      c.status = { ...c.status, started: true, ready: !readinessProbe(run) && (!run.isEcho || run.listening) };
      startReadinessAndLiveness(ctx, run);
      ctx.changed(run.sb.uid);
      if (c.sidecar) run.startNext();
    },
    afterFailure: () => {
      if (++failures >= Math.max(1, startup.failureThreshold ?? 3)) {
        failProbe(ctx, run, 'startup', startup.terminationGracePeriodSeconds);
      }
    },
  });
}

/** The readiness and liveness workers (liveness, upstream's worker with an initial success:
 *  failureThreshold failures in a row kill the container). */
function startReadinessAndLiveness(ctx: NetnsPods, run: ContainerRun): void {
  const { c } = run;
  const probe = readinessProbe(run);
  c.readiness = probe && run.spec ? probeWorker(ctx, run, {
    probe, kind: 'Readiness',
    onChange: (ready) => {
      if (!isCurrent(run)) return;
      c.status = { ...c.status, ready };
      ctx.changed(run.sb.uid);
    },
  }) : undefined;
  const live = run.plainInit ? undefined : run.spec?.livenessProbe;
  c.liveness = live && run.spec ? probeWorker(ctx, run, {
    probe: live, kind: 'Liveness', initial: true,
    onChange: (alive) => { if (!alive) failProbe(ctx, run, 'liveness', live.terminationGracePeriodSeconds); },
  }) : undefined;
}

/** A probe failed for good: the container is killed (preStop, SIGTERM, grace). */
function failProbe(ctx: NetnsPods, run: ContainerRun, kind: string, graceSeconds?: number): void {
  const { c, sb, name } = run;
  if (!isCurrent(run) || sb.stopping) return;
  c.liveness?.stop();
  c.startup?.stop();
  ctx.event(sb.uid, { type: 'Normal', reason: 'Killing', fieldPath: fieldPath(c, name),
    message: `Container ${name} failed ${kind} probe, will be restarted` });
  const grace = graceSeconds === undefined ? podGraceMs(ctx, sb) : graceSeconds * 1000 * ctx.scale;
  void killContainer(ctx, sb, name, grace);
}

/** postStart runs beside the program (upstream runs it right after the start); a failed one is
 *  a FailedPostStartHook Warning and the container is killed. A sidecar has started once it is
 *  done. */
function runPostStart(ctx: NetnsPods, run: ContainerRun): void {
  const post = postStartHook(run);
  if (!post) return;
  const { c, sb, name } = run;
  const grace = podGraceMs(ctx, sb);
  const sidecarHook = !!c.sidecar && !startupProbe(run);
  void runHook(ctx, sb, name, post, Math.max(grace, 30_000 * ctx.scale)).then((r) => {
    if (!isCurrent(run) || sb.stopping) return;
    if (r.ok) {
      if (!sidecarHook) return;
      c.status = { ...c.status, started: true };
      ctx.changed(sb.uid);
      run.startNext();
      return;
    }
    ctx.event(sb.uid, { type: 'Warning', reason: 'FailedPostStartHook', fieldPath: fieldPath(c, name),
      message: `PostStartHook failed: ${r.message ?? ''}`.trim() });
    c.liveness?.stop();
    c.startup?.stop();
    void killContainer(ctx, sb, name, grace);
  });
}

/** The echo printed its `ready` line: the startup or readiness probe looks now; without one the
 *  container is ready. */
export function echoListening(ctx: NetnsPods, run: ContainerRun): void {
  const { c } = run;
  run.listening = true;
  if (c.startup) c.startup.trigger();
  else if (c.readiness) c.readiness.trigger();
  else if (!c.status.ready) {
    c.status = { ...c.status, ready: true };
    ctx.changed(run.sb.uid);
  }
}
