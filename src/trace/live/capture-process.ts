// A watcher process in a network namespace (tcpdump, `nft monitor trace`, `xtables-monitor
// --trace`): started through `ip netns exec` with an argument array, awaited until it really
// listens, stopped with SIGINT (tcpdump then flushes its file), SIGKILL if it lingers.
// `ip netns exec` execs the tool in place, so the child's pid is the tool's own.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { kdpError } from '../../errors.js';
import { hostSpawner, type HostChild, type Spawner } from '../../host/spawn.js';

export interface WatcherSpec {
  readonly netns: string;
  readonly file: string;
  readonly args: readonly string[];
  /** Resolves once the tool listens; given the child and its stderr so far. */
  readonly ready: (child: HostChild, stderr: () => string) => boolean;
  readonly readyTimeoutMs?: number;
  readonly spawner?: Spawner;
}

export interface Watcher {
  readonly pid: number;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Stops the tool and resolves once it has exited; with `quietMs`, first waits (at most a
   *  second) until its output has been still that long: events still in flight get printed. */
  stop(quietMs?: number): Promise<void>;
}

const POLL_MS = 10;

export async function startWatcher(spec: WatcherSpec): Promise<Watcher> {
  const what = `${spec.file} in netns ${spec.netns}`;
  const child = (spec.spawner ?? hostSpawner).spawn('ip',
    ['netns', 'exec', spec.netns, spec.file, ...spec.args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let exit: string | undefined;
  child.stdout!.on('data', (d: Buffer) => { out += d.toString('utf8'); });
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString('utf8')).slice(-8000); });
  const exited = new Promise<void>((res) => {
    child.once('exit', (code, sig) => { exit = `exited (${code ?? sig})`; res(); });
    child.once('error', (e) => { exit = `could not start (${e.message})`; res(); });
  });
  const stop = async (quietMs = 0) => {
    const until = Date.now() + 1000;
    let seen = -1;
    while (quietMs > 0 && exit === undefined && out.length !== seen && Date.now() < until) {
      seen = out.length;
      await new Promise((r) => setTimeout(r, quietMs));
    }
    if (exit === undefined) child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (spec.readyTimeoutMs ?? 5000);
  for (;;) {
    if (exit !== undefined) throw kdpError('KDP_LIVE_CAPTURE', `${what} ${exit}: ${err.trim()}`);
    if (child.pid !== undefined && spec.ready(child, () => err)) break;
    if (Date.now() > deadline) {
      await stop();
      throw kdpError('KDP_LIVE_CAPTURE',
        `${what} did not start listening within ${spec.readyTimeoutMs ?? 5000} ms: ${err.trim()}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return { pid: child.pid!, stdout: () => out, stderr: () => err, stop };
}

/** tcpdump tells on stderr once its capture is open. */
export function tcpdumpListening(_child: HostChild, stderr: () => string): boolean {
  return stderr().includes('listening on');
}

const NETLINK_NETFILTER = 12;
/** NFNLGRP_NFTRACE = 9: bit 8 of the socket's group mask. */
const NFTRACE_GROUP_BIT = 1 << 8;

/**
 * The process has joined the netfilter trace multicast group: one of its sockets appears in its
 * namespace's /proc/net/netlink with protocol NETLINK_NETFILTER and the NFTRACE group bit set.
 * From then on no trace event of the namespace can be missed.
 */
export function subscribedToNftrace(child: HostChild): boolean {
  const pid = child.pid;
  if (pid === undefined) return false;
  try {
    const inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const m = /^socket:\[(\d+)\]$/.exec(safeReadlink(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    }
    return readFileSync(`/proc/${pid}/net/netlink`, 'utf8').split('\n').slice(1).some((l) => {
      const f = l.trim().split(/\s+/);
      const traced = (parseInt(f[3] ?? '0', 16) & NFTRACE_GROUP_BIT) !== 0;
      return Number(f[1]) === NETLINK_NETFILTER && traced && inodes.has(f[9] ?? '');
    });
  } catch {
    return false;
  }
}

function safeReadlink(p: string): string {
  try {
    return readlinkSync(p);
  } catch {
    return '';
  }
}

/** How one kernel tracing tool is set up, run and read. */
export interface KernelTraceTool<T> {
  readonly netns: string;
  /** Adds the tracing rules (kdp's own only). */
  setUp(): Promise<void>;
  /** Removes them again; never throws. */
  tearDown(): Promise<void>;
  readonly file: string;
  readonly args: readonly string[];
  /** Builds the result from the tool's whole output. */
  read(output: string): T;
}

/** Trace events arrive after the packet: stop once the output has been still this long. */
const TRACE_QUIET_MS = 100;

/** Sets up the rules, starts the monitor once subscribed; `stop` tears down and reads. */
export async function startKernelTraceTool<T>(
  t: KernelTraceTool<T>,
): Promise<{ stop(): Promise<T> }> {
  let watcher: Watcher;
  try {
    await t.setUp();
    watcher = await startWatcher({
      netns: t.netns, file: t.file, args: t.args, ready: subscribedToNftrace,
    });
  } catch (e) {
    await t.tearDown();
    throw e;
  }
  return {
    async stop() {
      await watcher.stop(TRACE_QUIET_MS);
      await t.tearDown();
      return t.read(watcher.stdout());
    },
  };
}
