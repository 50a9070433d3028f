// Starts workload processes from a small helper process instead of kdp's own. Why: spawn() in
// Node blocks the event loop until the child has exec'd, and forking kdp (hundreds of MiB mapped)
// costs far more than forking a 40 MiB helper; with 50 pods starting at once that was the largest
// item of the main thread's time per pod. The helper (HELPER_SOURCE, run with `node -e`) takes
// JSON lines over stdio:
//   in:  {"op":"spawn","id":1,"file":"nsenter","args":[..],"env":{..}}
//        {"op":"kill","id":1,"sig":"SIGTERM"}
//   out: {"id":1,"pid":1234}  {"id":1,"d":"<stdout/stderr chunk>"}  {"id":1,"exit":0,"sig":null}
// Each workload leads its own process group (a session): signals go to the program itself (as a
// container's SIGTERM goes to its PID 1), and once it has exited whatever it left running in its
// group is SIGKILLed, as a container's processes end with it.
// It exits when its stdin closes, leaving the workloads running (as kdp dying did before); they
// live in recorded pod namespaces, so `kdp down` still finds them. If the helper dies, its
// workloads are reported exited (SIGKILL) and the next start launches a new helper.

import { EventEmitter } from 'node:events';
import { isRunning, startHelperProcess, type HelperProcess } from './helper-process.js';

const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
const kids = new Map();
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
  let r;
  try { r = JSON.parse(l); } catch { return; }
  if (r.op === 'kill') { try { kids.get(r.id)?.kill(r.sig); } catch {} return; }
  if (r.op !== 'spawn') return;
  let done = false;
  const exit = (code, sig) => {
    if (done) return;
    done = true;
    kids.delete(r.id);
    send({ id: r.id, exit: code, sig });
  };
  let c;
  try { c = spawn(r.file, r.args, { env: r.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }); }
  catch (e) { send({ id: r.id, d: String(e && e.message) + '\\n' }); exit(127, null); return; }
  kids.set(r.id, c);
  if (c.pid) send({ id: r.id, pid: c.pid });
  c.stdout.on('data', (b) => send({ id: r.id, d: b.toString('utf8') }));
  c.stderr.on('data', (b) => send({ id: r.id, d: b.toString('utf8'), e: 1 }));
  c.on('error', (e) => {
    send({ id: r.id, d: String(e && e.message) + '\\n' });
    if (!c.pid) exit(127, null);
  });
  c.on('exit', (code, sig) => {
    // What the program left behind goes with it, as a container's processes end with its PID 1.
    try { process.kill(-c.pid, 'SIGKILL'); } catch {}
    // The exit is reported after the output still in the pipes ('close'), so a log read once
    // the container is terminated holds its last lines; bounded, as an escaped process may
    // keep a pipe open.
    const t = setTimeout(() => exit(code, sig), 500);
    c.once('close', () => { clearTimeout(t); exit(code, sig); });
  });
}).on('close', () => process.exit(0));
`;

export interface LaunchSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Record<string, string | undefined>;
}

/**
 * A started workload, shaped like the part of ChildProcess the runtime uses. Events:
 * `spawn` (pid), `data` (string chunk, then `'stdout'` or `'stderr'`: the container log's stream
 * tag), `exit` (code, signal).
 */
export interface Workload extends EventEmitter {
  readonly pid?: number;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): void;
}

export interface Launcher {
  launch(spec: LaunchSpec): Workload;
  close(): Promise<void>;
}

export interface LauncherOptions {
  /** Helper processes, used in turn (a burst of pods forks from several at once). Default 2. */
  readonly helpers?: number;
  /** Start the helpers now rather than with the first workload (a spawn blocks kdp's loop). */
  readonly warm?: boolean;
  /** Called with the helper's pid when it starts (the host state file records it). */
  readonly onSpawn?: (pid: number) => void;
  readonly onExit?: (pid: number) => void;
}

class HelperWorkload extends EventEmitter implements Workload {
  pid?: number;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  constructor(private readonly send: (sig: NodeJS.Signals) => void) { super(); }
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.exitCode === null && this.signalCode === null) this.send(signal);
  }
  finish(code: number | null, sig: NodeJS.Signals | null): void {
    if (this.exitCode !== null || this.signalCode !== null) return;
    this.exitCode = code;
    this.signalCode = sig;
    this.emit('exit', code, sig);
  }
}

interface HelperMessage {
  id?: number; pid?: number; d?: string; e?: 1; exit?: number | null; sig?: NodeJS.Signals | null;
}

export function buildHelperLauncher(o: LauncherOptions = {}): Launcher {
  const size = Math.max(1, o.helpers ?? 2);
  const helpers: Array<HelperProcess | undefined> = Array.from({ length: size }, () => undefined);
  /** Workloads per helper: a helper keeps kdp alive only while it runs some (as their own
   * processes did). */
  const load = new Map<HelperProcess, number>();
  const running = new Map<number, HelperWorkload>();
  const owner = new Map<number, HelperProcess>();
  let nextId = 1;

  function release(h: HelperProcess): void {
    const n = (load.get(h) ?? 1) - 1;
    load.set(h, n);
    if (n === 0) h.hold(false);
  }

  function ensure(i: number): HelperProcess {
    const have = helpers[i];
    if (have && isRunning(have.child)) return have;
    const h = startHelperProcess<HelperMessage>(HELPER_SOURCE, (m) => {
      const id = m.id ?? -1;
      const w = running.get(id);
      if (!w || owner.get(id) !== h) return;
      if (m.pid !== undefined) {
        w.pid = m.pid;
        w.emit('spawn', m.pid);
      }
      if (m.d !== undefined) w.emit('data', m.d, m.e ? 'stderr' : 'stdout');
      if ('exit' in m) {
        running.delete(id);
        release(h);
        w.finish(m.exit ?? null, m.sig ?? null);
      }
    });
    const pid = h.child.pid;
    if (pid) o.onSpawn?.(pid);
    h.child.on('exit', () => {
      if (pid) o.onExit?.(pid);
      if (helpers[i] === h) helpers[i] = undefined;
      load.delete(h);
      for (const [id, w] of running) {
        if (owner.get(id) !== h) continue;
        running.delete(id);
        w.finish(null, 'SIGKILL');
      }
    });
    helpers[i] = h;
    return h;
  }

  // Started, but not holding kdp: that is for helpers with workloads.
  if (o.warm) helpers.forEach((_, i) => ensure(i).hold(false));

  return {
    launch(spec) {
      const id = nextId++;
      // Round robin: the spawns of a burst fork from several helpers at once.
      const h = ensure(id % size);
      const w = new HelperWorkload((sig) => {
        if (owner.get(id) === h) h.send({ op: 'kill', id, sig });
      });
      w.on('exit', () => owner.delete(id));
      running.set(id, w);
      owner.set(id, h);
      load.set(h, (load.get(h) ?? 0) + 1);
      h.hold(true);
      h.send({ op: 'spawn', id, file: spec.file, args: spec.args, env: spec.env });
      return w;
    },
    async close() {
      const live = helpers.splice(0, size, ...Array.from({ length: size }, () => undefined))
        .filter((h): h is HelperProcess => !!h && isRunning(h.child));
      await Promise.all(live.map((h) => new Promise<void>((resolve) => {
        // Held until it has exited: a helper without workloads is not held, and with nothing
        // else pending the caller's process would end in the middle of its cleanup.
        h.hold(true);
        h.child.once('exit', () => resolve());
        h.child.stdin!.end();
        setTimeout(() => h.child.kill('SIGKILL'), 1000).unref();
      })));
    },
  };
}
