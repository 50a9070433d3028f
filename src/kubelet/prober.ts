// The node's prober: answers "does this tcpSocket/httpGet probe of a pod succeed", asked from the
// node's network namespace as upstream's kubelet asks from the host. Node cannot setns, so one
// long-lived helper (bin/kdp-kubelet-prober.js) runs in the node namespace (`nsenter --net`) and
// takes requests as JSON lines over stdio: a probe costs a line each way, not a process. The
// helper starts on the first probe and is restarted if it dies (pending probes fail).

import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { hostSpawner, isRunning, type HostChild, type Spawner } from '../host/spawn.js';

export interface ProbeRequest {
  readonly kind: 'tcp' | 'http';
  readonly host: string;
  readonly port: number;
  readonly timeoutMs: number;
  readonly path?: string;
  readonly scheme?: 'HTTP' | 'HTTPS';
  readonly headers?: ReadonlyArray<{ name: string; value: string }>;
}

export interface ProbeOutcome {
  readonly ok: boolean;
  readonly message?: string;
}

export interface Prober {
  probe(req: ProbeRequest): Promise<ProbeOutcome>;
  close(): Promise<void>;
}

export interface HelperProberOptions {
  /** The node's namespace; without it the helper runs in the caller's namespace (tests). */
  readonly netns?: string;
  readonly script?: string;
  /** Called with the helper's pid when it starts (the host state file records it). */
  readonly onSpawn?: (pid: number) => void;
  readonly onExit?: (pid: number) => void;
  readonly spawner?: Spawner;
}

const HELPER = fileURLToPath(new URL('../../bin/kdp-kubelet-prober.js', import.meta.url));
/** Small V8 heaps: the helper holds a few sockets at a time. */
const NODE_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=16', '--v8-pool-size=0'];

export function buildHelperProber(o: HelperProberOptions = {}): Prober {
  let child: HostChild | undefined;
  let nextId = 1;
  const pending = new Map<number, (r: ProbeOutcome) => void>();
  let closed = false;

  function ensure(): HostChild {
    if (isRunning(child)) return child;
    const argv = [process.execPath, ...NODE_FLAGS, o.script ?? HELPER];
    const spawner = o.spawner ?? hostSpawner;
    const c = o.netns
      ? spawner.spawn('nsenter', [`--net=/run/netns/${o.netns}`, '--', ...argv],
        { stdio: ['pipe', 'pipe', 'ignore'], detached: true })
      : spawner.spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'], detached: true });
    const pid = c.pid;
    if (pid) o.onSpawn?.(pid);
    c.stdin!.on('error', () => undefined);
    createInterface({ input: c.stdout! }).on('line', (l) => {
      let m: { id?: number; ok?: boolean; message?: string };
      try { m = JSON.parse(l); } catch { return; }
      const done = pending.get(m.id ?? -1);
      if (!done) return;
      pending.delete(m.id!);
      done({ ok: m.ok === true, ...(m.message ? { message: m.message } : {}) });
    });
    c.on('exit', () => {
      if (pid) o.onExit?.(pid);
      if (child === c) child = undefined;
      for (const [id, done] of pending) {
        pending.delete(id);
        done({ ok: false, message: 'prober helper exited' });
      }
    });
    child = c;
    return c;
  }

  return {
    probe(req) {
      if (closed) return Promise.resolve({ ok: false, message: 'prober closed' });
      const id = nextId++;
      return new Promise<ProbeOutcome>((resolve) => {
        pending.set(id, resolve);
        ensure().stdin!.write(`${JSON.stringify({ id, ...req })}\n`);
      });
    },
    async close() {
      closed = true;
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.stdin!.end();
        setTimeout(() => c.kill('SIGKILL'), 1000).unref();
      });
    },
  };
}
