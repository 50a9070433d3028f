// The only door to the kernel's tools. Programs run with execFile and argument arrays — never a
// shell — so object names can never become shell syntax. Commands for a network namespace go
// through `ip netns exec` when they read /sys (iptables, tc: it also remounts /sys for the
// namespace, so they see its interfaces), through the lighter `nsenter --net` otherwise.

import { execFile } from 'node:child_process';
import { kdpError } from '../errors.js';

export interface ExecOptions {
  /** Written to the program's stdin (pieces: one after another, no flat copy). */
  readonly input?: string | readonly string[];
  /** Run inside this named network namespace (`ip netns exec`). */
  readonly netns?: string;
  /** Run inside the network namespace at this path (`nsenter --net=PATH`), e.g. a CNI_NETNS. */
  readonly netnsPath?: string;
  readonly timeoutMs?: number;
}

export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program; rejects with KDP_HOST_EXEC naming the command, exit code and stderr. */
export interface HostExec {
  run(file: string, args: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
}

export function buildHostExec(): HostExec {
  return {
    run(file, args, opts = {}) {
      const [cmd, argv] = wrapForNetns(file, args, opts);
      return new Promise((resolve, reject) => {
        const child = execFile(
          cmd,
          argv,
          { timeout: opts.timeoutMs ?? 300_000, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
          (err, stdout, stderr) => {
            if (err) {
              const code = (err as NodeJS.ErrnoException & { code?: unknown }).code;
              reject(
                kdpError(
                  'KDP_HOST_EXEC',
                  `${describe(file, args, opts)} failed (${code ?? 'signal'}): ${stderr.trim() || err.message}`,
                  {},
                  err,
                ),
              );
              return;
            }
            resolve({ stdout, stderr });
          },
        );
        // A child that exits before reading its input must fail through its exit status, not
        // crash the caller with EPIPE.
        child.stdin?.on('error', () => undefined);
        if (opts.input !== undefined && child.stdin) writeInput(child.stdin, opts.input);
      });
    },
  };
}

/** Writes `input` (a text or its pieces) to `stdin` and closes it. */
export function writeInput(stdin: NodeJS.WritableStream,
  input: string | readonly string[]): void {
  if (typeof input === 'string') {
    stdin.end(input);
    return;
  }
  for (const piece of input) stdin.write(piece);
  stdin.end();
}

/** Tools that read /sys for the namespace's interfaces: these need `ip netns exec`. */
const SYSFS_TOOLS = /^(ip6?tables(-restore|-save)?|tc)$/;

export function wrapForNetns(file: string, args: readonly string[], opts: ExecOptions): [string, readonly string[]] {
  if (opts.netns && SYSFS_TOOLS.test(file)) return ['ip', ['netns', 'exec', opts.netns, file, ...args]];
  // The others (ip, nft, sysctl, node) work through netlink and /proc/sys, which follow the
  // process's namespace: nsenter skips `ip netns exec`'s mount namespace and sysfs remount,
  // about half the cost of a run.
  if (opts.netns) return ['nsenter', [`--net=/run/netns/${opts.netns}`, '--', file, ...args]];
  if (opts.netnsPath) return ['nsenter', [`--net=${opts.netnsPath}`, '--', file, ...args]];
  return [file, args];
}

export function describe(file: string, args: readonly string[], opts: ExecOptions = {}): string {
  const ns = opts.netns ?? opts.netnsPath;
  const where = ns ? `[netns ${ns}] ` : '';
  return `${where}${[file, ...args].join(' ')}`;
}
