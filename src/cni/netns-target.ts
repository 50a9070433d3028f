// Where the plugin's commands run. "node" is the plugin's own namespace: the current one when the
// plugin is exec'd inside the node (as runtimes do), or a named one when the node agent calls the
// plugin in-process from the host. "pod" is CNI_NETNS, reached by path with nsenter.

import { statSync } from 'node:fs';
import type { ExecResult, HostExec } from '../host/exec.js';

export interface NodeNetns {
  /** Named namespace of the node; undefined = the current process's namespace. */
  readonly name?: string;
}

export interface Targets {
  node(file: string, args: readonly string[], input?: string): Promise<ExecResult>;
  pod(file: string, args: readonly string[], input?: string): Promise<ExecResult>;
  /** `ip` in the node namespace (uses `ip -n` for named namespaces: one process, not two). */
  ipNode(args: readonly string[], input?: string): Promise<ExecResult>;
  /** What `ip link ... netns X` needs to put a link into the node namespace. */
  readonly nodeNetnsArg: string;
  /** Path of the node namespace, for the same-namespace check. */
  readonly nodeNetnsPath: string;
}

export function buildTargets(exec: HostExec, node: NodeNetns, podPath: string): Targets {
  const named = node.name;
  return {
    node: (file, args, input) => exec.run(file, args, { netns: named, input }),
    pod: (file, args, input) => exec.run(file, args, { netnsPath: podPath, input }),
    ipNode: (args, input) => exec.run('ip', named ? ['-n', named, ...args] : args, { input }),
    nodeNetnsArg: named ?? String(process.pid),
    nodeNetnsPath: named ? `/run/netns/${named}` : '/proc/self/ns/net',
  };
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
