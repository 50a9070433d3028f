// Long-lived `ip -batch -` processes in a node's namespace (or in kdp's own, where the runtime
// makes pod namespaces), for a long-lived caller (the node agent): an ADD's batch is written to a
// running ip instead of starting one, which saves a process spawn per call — the largest cost of
// a CNI ADD. A request ends with `link show dev lo`, whose (line-buffered, via stdbuf) output
// marks completion; ip without -force exits at the first failing line, reporting
// `Command failed -:N`, and the session respawns on the next request. If the caller dies, the
// pipe closes and ip exits on end of input.

import { hostSpawner, type HostChild, type Spawner } from './spawn.js';

/** What a batch did: ip stops at the first failing line (without -force). */
export interface BatchOutcome {
  readonly ok: boolean;
  /** Every line ip reported as failed (several only with `force`). */
  readonly failedLines: readonly number[];
  readonly stderr: string;
}

export interface IpSessionPool {
  /** Runs the lines (no -force semantics: stops at the first failure). */
  run(lines: readonly string[]): Promise<BatchOutcome>;
  close(): void;
}

export interface IpSessionOptions {
  /** Sessions run in parallel; requests queue per session. Default 2. */
  readonly size?: number;
  /** Start the processes now rather than at the first request (the node agent's first pod). */
  readonly warm?: boolean;
  readonly timeoutMs?: number;
  readonly onSpawn?: (pid: number) => void;
  readonly onExit?: (pid: number) => void;
  readonly spawner?: Spawner;
}

interface Proc {
  readonly child: HostChild;
  sent: number;
  out: string;
  err: string;
  exited: boolean;
  wake?: () => void;
}

const MARKER = 'link show dev lo';

/** `netns` undefined: the sessions run in kdp's own namespace (and mount namespace). */
export function buildIpSessionPool(
  netns: string | undefined, o: IpSessionOptions = {},
): IpSessionPool {
  const sessions = Array.from({ length: o.size ?? 2 }, () => buildSession(netns, o));
  if (o.warm) sessions.forEach((s) => s.warm());
  return {
    run(lines) {
      const s = sessions.reduce((a, b) => (b.pending() < a.pending() ? b : a));
      return s.run(lines);
    },
    close: () => sessions.forEach((s) => s.close()),
  };
}

function buildSession(netns: string | undefined, o: IpSessionOptions) {
  let proc: Proc | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  let pending = 0;
  let closed = false;

  function start(): Proc {
    // Its own process group, so a terminal's Ctrl-C does not cut it off mid-shutdown.
    const where = netns ? ['-n', netns] : [];
    const child = (o.spawner ?? hostSpawner).spawn('stdbuf', ['-oL', 'ip', ...where, '-batch', '-'], {
      stdio: ['pipe', 'pipe', 'pipe'], detached: true,
    });
    const p: Proc = { child, sent: 0, out: '', err: '', exited: false };
    const pid = child.pid;
    if (pid) o.onSpawn?.(pid);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => { p.out += d; p.wake?.(); });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => { p.err += d; p.wake?.(); });
    child.stdin!.on('error', () => undefined);
    child.on('error', (e) => { p.err += e.message; });
    child.on('close', () => {
      p.exited = true;
      if (pid) o.onExit?.(pid);
      p.wake?.();
    });
    child.unref();
    return p;
  }

  async function once(lines: readonly string[]): Promise<BatchOutcome> {
    if (closed) return { ok: false, failedLines: [], stderr: 'ip session closed' };
    if (!proc || proc.exited) proc = start();
    const p = proc;
    const base = p.sent;
    p.out = '';
    p.err = '';
    p.sent += lines.length + 1;
    p.child.stdin!.write(`${lines.join('\n')}\n${MARKER}\n`);
    const done = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), o.timeoutMs ?? 60_000);
      p.wake = () => {
        if (p.exited || /link\/loopback/.test(p.out)) {
          clearTimeout(timer);
          resolve(!p.exited);
        }
      };
      p.wake();
    });
    p.wake = undefined;
    if (done) return { ok: true, failedLines: [], stderr: p.err };
    if (!p.exited) p.child.kill('SIGKILL');
    proc = undefined;
    const failed = [...p.err.matchAll(/Command failed -:(\d+)/g)].map((m) => Number(m[1]) - base);
    return { ok: false, failedLines: failed, stderr: p.err || 'ip batch session timed out' };
  }

  return {
    pending: () => pending,
    warm() {
      if (!closed && (!proc || proc.exited)) proc = start();
    },
    run(lines: readonly string[]): Promise<BatchOutcome> {
      pending++;
      const r = chain.then(() => once(lines)).finally(() => { pending--; });
      chain = r.catch(() => undefined);
      return r;
    },
    close() {
      closed = true;
      proc?.child.stdin!.end();
      proc = undefined;
    },
  };
}
