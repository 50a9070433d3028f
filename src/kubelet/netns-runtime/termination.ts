// Stopping containers as upstream's kubelet does: one container by killContainer (its preStop
// hook within the grace period, SIGTERM, SIGKILL when the grace period is over); a pod's app
// (and running init) containers together, then its sidecars one at a time in reverse spec order
// (KEP-753), at deletion and once the app containers have finished for good.

import { appsFinished } from '../sidecars.js';
import { runHook } from './in-container.js';
import {
  fieldPath, podGraceMs, specOf, stopProbeWorkers, type NetnsPods, type Sandbox,
} from './pods.js';

/** Stops one container: its preStop hook first (within the grace period), then SIGTERM,
 *  SIGKILL when the grace period is over (at least 2 s, scaled, after a hook). Resolves once it
 *  has exited. */
export async function killContainer(ctx: NetnsPods, sb: Sandbox, name: string, graceMs: number):
  Promise<void> {
  const c = sb.containers.get(name)!;
  const child = c.child;
  const gone = () => !child || child.exitCode !== null || child.signalCode !== null;
  if (gone()) return;
  const started = Date.now();
  const hook = specOf(sb, name)?.lifecycle?.preStop;
  if (hook) {
    const r = await runHook(ctx, sb, name, hook, Math.max(1, graceMs));
    // upstream records no output (it may hold secrets).
    if (!r.ok) {
      ctx.event(sb.uid, { type: 'Warning', reason: 'FailedPreStopHook', fieldPath: fieldPath(c, name),
        message: 'PreStopHook failed' });
    }
  }
  if (gone()) return;
  const left = Math.max(graceMs - (Date.now() - started), hook ? 2000 * ctx.scale : 0);
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => child!.kill('SIGKILL'), left);
    child!.once('exit', () => { clearTimeout(t); resolve(); });
    child!.kill('SIGTERM');
  });
}

/** Stops the pod's sidecars one at a time in reverse spec order, within the deadline. */
export async function stopSidecars(ctx: NetnsPods, sb: Sandbox, deadline: number): Promise<void> {
  const sidecars = [...sb.containers.entries()].filter(([, c]) => c.sidecar).reverse();
  for (const [name, c] of sidecars) {
    clearTimeout(c.restartTimer);
    c.restartTimer = undefined;
    stopProbeWorkers(c);
    await killContainer(ctx, sb, name, Math.max(0, deadline - Date.now()));
  }
}

/** Once the app containers have finished for good, the sidecars stop (reverse spec order, as
 *  at deletion); a regular init container that failed under Never ends the pod the same way. */
export function stopSidecarsIfDone(ctx: NetnsPods, sb: Sandbox): void {
  if (sb.sidecarsStopping || sb.stopping) return;
  const all = [...sb.containers.values()];
  const initFailed = sb.pod.spec?.restartPolicy === 'Never' && all.some((c) =>
    c.init && !c.sidecar && c.status.state === 'exited' && (c.status.exitCode ?? 0) !== 0);
  const appsDone = sb.appsStarted && appsFinished(sb.pod, all.filter((c) => !c.init).map((c) => c.status),
    (name) => !!sb.containers.get(name)?.restartTimer);
  if (!initFailed && !appsDone) return;
  if (!all.some((c) => c.sidecar)) return;
  sb.sidecarsStopping = true;
  void stopSidecars(ctx, sb, Date.now() + podGraceMs(ctx, sb)).then(() => ctx.changed(sb.uid));
}

/** Stops every container within the grace period: the app (and running init) containers
 *  together, then the sidecars. The sandbox stops for good: no restart, no next container. */
export async function stopProcesses(ctx: NetnsPods, sb: Sandbox,
  graceMs = ctx.o.killGraceMs ?? 2000): Promise<void> {
  sb.stopping = true;
  const deadline = Date.now() + graceMs;
  for (const c of sb.containers.values()) {
    clearTimeout(c.restartTimer);
    stopProbeWorkers(c);
  }
  await Promise.all([...sb.containers.entries()].filter(([, c]) => !c.sidecar)
    .map(([name]) => killContainer(ctx, sb, name, graceMs)));
  await stopSidecars(ctx, sb, deadline);
}
