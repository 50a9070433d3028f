// Where the plugin's commands run. "node" is the plugin's own namespace: the current one when the
// plugin is exec'd inside the node (as runtimes do), or a named one when the node agent calls the
// plugin in-process from the host. "pod" is CNI_NETNS: by name (`ip -n`, `ip netns exec`) when it
// lies in /run/netns, else by path with nsenter.
//
// Speed contract: process spawns are the cost of a CNI call (~20-50 ms each on a busy host, far
// more than the kernel work), so a whole ADD is one `ip -batch` in the node namespace. Lines for
// other namespaces ride in it as `netns exec NS cmd` (ip forks them itself, which is much cheaper
// than a spawn from a large Node process); their input goes through private temp files.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecResult, HostExec } from '../host/exec.js';
import type { BatchOutcome } from '../host/ip-session.js';

export interface NodeNetns {
  /** Named namespace of the node; undefined = the current process's namespace. */
  readonly name?: string;
}

/** The outcome of one `ip -batch`; line numbers are 1-based, as ip reports them. */
export type { BatchOutcome };

export interface Targets {
  node(file: string, args: readonly string[], input?: string): Promise<ExecResult>;
  pod(file: string, args: readonly string[], input?: string): Promise<ExecResult>;
  /** `ip` in the node namespace (uses `ip -n` for named namespaces: one process, not two). */
  ipNode(args: readonly string[], input?: string): Promise<ExecResult>;
  /** `ip` in the pod namespace. */
  ipPod(args: readonly string[], input?: string): Promise<ExecResult>;
  /** Runs batch lines in the node namespace; never rejects, reports the failing line. */
  nodeBatch(lines: readonly string[], opts?: { force?: boolean }): Promise<BatchOutcome>;
  /** What `ip link ... netns X` needs to put a link into the node namespace. */
  readonly nodeNetnsArg: string;
  /** The node namespace's name, when it has one (`netns exec` lines need it). */
  readonly nodeName?: string;
  /** The pod namespace's name, when CNI_NETNS lies in /run/netns. */
  readonly podName?: string;
  /** Path of the node namespace, for the same-namespace check. */
  readonly nodeNetnsPath: string;
  /** A private file holding `text`, for a batch line's input; removed by `dispose`. */
  tempFile(text: string): string;
  dispose(): void;
}

/**
 * `/run/netns/NAME` or `/var/run/netns/NAME` → NAME, when NAME can stand as one word in an
 * `ip -batch` line (`netns exec NAME`); any other namespace is entered by its path instead.
 */
export function netnsNameOf(path: string): string | undefined {
  const m = /^(?:\/var)?\/run\/netns\/([A-Za-z0-9_.+@=-]+)$/.exec(path);
  return m && m[1] !== '.' && m[1] !== '..' ? m[1] : undefined;
}

/** A running `ip -batch` in the node namespace (host/ip-session.ts). */
export interface BatchSession {
  run(lines: readonly string[]): Promise<BatchOutcome>;
}

/** `session` serves the non-force batches of a named node namespace. */
export function buildTargets(exec: HostExec, node: NodeNetns, podPath: string, session?: BatchSession): Targets {
  const named = node.name;
  const podName = netnsNameOf(podPath);
  let dir: string | undefined;
  const ipNode = (args: readonly string[], input?: string) =>
    exec.run('ip', named ? ['-n', named, ...args] : args, { input });
  return {
    node: (file, args, input) => exec.run(file, args, { netns: named, input }),
    pod: (file, args, input) => exec.run(file, args, { netnsPath: podPath, input }),
    ipNode,
    ipPod: (args, input) => podName
      ? exec.run('ip', ['-n', podName, ...args], { input })
      : exec.run('ip', args, { netnsPath: podPath, input }),
    async nodeBatch(lines, opts = {}) {
      if (session && named && !opts.force) return session.run(lines);
      const args = [...(opts.force ? ['-force'] : []), '-batch', '-'];
      try {
        const r = await ipNode(args, `${lines.join('\n')}\n`);
        return { ok: true, failedLines: [], stderr: r.stderr };
      } catch (e) {
        return { ok: false, ...batchFailure((e as Error).message) };
      }
    },
    nodeNetnsArg: named ?? String(process.pid),
    nodeName: named,
    podName,
    nodeNetnsPath: named ? `/run/netns/${named}` : '/proc/self/ns/net',
    tempFile(text) {
      dir ??= mkdtempSync(join(tmpdir(), 'kdp-cni-'));
      const f = join(dir, randomBytes(6).toString('hex'));
      writeFileSync(f, text, { mode: 0o600, flag: 'wx' });
      return f;
    },
    dispose() {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}

/** Reads ip's `Command failed -:N` lines out of the batch's error text. */
function batchFailure(message: string): { failedLines: number[]; stderr: string } {
  const failed = [...message.matchAll(/Command failed -:(\d+)/g)].map((m) => Number(m[1]));
  return { failedLines: failed, stderr: message };
}

/** The error text of the failing line: what ip printed before `Command failed`. */
export function batchError(out: BatchOutcome): string {
  const text = out.stderr.replace(/^.*?failed \([^)]*\): /s, '');
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('Command failed'));
  return lines.join('; ') || out.stderr;
}

/** True when both paths name the same network namespace (same device and inode). */
export function isSameNetns(a: string, b: string): boolean {
  try {
    const sa = statSync(a);
    const sb = statSync(b);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

export function netnsExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
