// Running something in a container's namespaces: nsenter's arguments for them, an exec probe's
// or hook's command (argument array, no shell), and a lifecycle hook as upstream's handler
// runner (exec in the container, httpGet from the node's namespace, sleep).

import type { ProbeHandler } from '../../api/types.js';
import { hostSpawner, runProgram } from '../../host/spawn.js';
import type { ProbeOutcome } from '../prober.js';
import { probeRequest } from '../readiness.js';
import { specOf, type ContainerState, type NetnsPods, type Sandbox } from './pods.js';

/** A lifecycle hook's handler (upstream's LifecycleHandler: a probe handler or a sleep). */
export type LifecycleHandler = ProbeHandler & { sleep?: { seconds?: number } };

/** nsenter's arguments that put a program in the pod's namespaces: the holder's (network,
 *  mount, UTS, IPC) when the pod has one, else the network namespace alone. */
export function nsEnter(sb: Sandbox, wd: string): string[] {
  return [...(sb.holder?.pid ? [`--target=${sb.holder.pid}`, '--net', '--mount', '--uts', '--ipc']
    : [`--net=/run/netns/${sb.netns}`]), `--wd=${wd}`];
}

/** Runs a command in the container's namespaces with its env; exit 0 = ok, else the output is
 *  the message (as upstream's exec prober). */
export function execIn(sb: Sandbox, c: ContainerState, argv: readonly string[], timeoutMs: number):
  Promise<ProbeOutcome> {
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

/** A lifecycle hook as upstream's handler runner: exec in the container, httpGet from the
 *  node's namespace (the pod IP by default), sleep (scaled); others do nothing. */
export function runHook(ctx: NetnsPods, sb: Sandbox, name: string, h: LifecycleHandler,
  timeoutMs: number): Promise<ProbeOutcome> {
  const c = sb.containers.get(name)!;
  if (h.exec) return execIn(sb, c, h.exec.command ?? [], timeoutMs);
  if (h.sleep) {
    const ms = Math.min(timeoutMs, (h.sleep.seconds ?? 0) * 1000 * ctx.scale);
    return new Promise((resolve) => { setTimeout(() => resolve({ ok: true }), ms).unref?.(); });
  }
  const spec = specOf(sb, name);
  if (h.httpGet && spec) {
    const req = probeRequest({ httpGet: h.httpGet, timeoutSeconds: Math.ceil(timeoutMs / 1000) }, spec,
      sb.podIPs[0] ?? '');
    if (!req || 'fixed' in req) {
      return Promise.resolve({ ok: false, message: 'hook port does not name a container port' });
    }
    return ctx.prober.probe(req);
  }
  return Promise.resolve({ ok: true });
}
