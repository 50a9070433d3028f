// Where a kube-proxy's compiled syncs go. An applier is atomic: a failed apply throws and leaves
// the rules it held before. Two implementations: in-memory (virtual mode: each mode's fake, its
// registry entry's `memoryTable`, fails like the kernel) and kernel (netns mode,
// kernel-applier.ts). `dump` answers "what does this node hold now", in the mode's own dump
// format — what `kdp rules`, `kdp trace` and `kdp diff` read.

import type { ProxyMode, SyncResult } from './backend.js';
import { proxyMode, type MemoryTable } from './registry.js';
import type { IPFamily } from './types.js';
import type { SysctlWrite } from './sysctls.js';

export interface RuleApplier {
  readonly mode: ProxyMode;
  apply(family: IPFamily, result: SyncResult): Promise<void>;
  dump(family: IPFamily): Promise<string>;
  /** Kernel appliers: how what the kernel holds (`kernelDump`, or a fresh dump) differs from
   *  what the applied syncs compiled; [] when it matches or cannot be judged. */
  drift?(family: IPFamily, kernelDump?: string): Promise<string[]>;
  /** Kernel appliers: re-applies, atomically, everything the applied syncs compiled (heals
   *  drift); rules that are not kube-proxy's are left alone. */
  restore?(family: IPFamily): Promise<void>;
  /** Kernel appliers: kube-proxy's start-up sysctls (sysctls.ts) in the node's namespace,
   *  before the first apply; returns what could not be set (logged, not fatal). */
  setSysctls?(writes: readonly SysctlWrite[]): Promise<string[]>;
}

export function buildMemoryApplier(mode: ProxyMode): RuleApplier {
  const entry = proxyMode(mode);
  const tables = new Map<IPFamily, MemoryTable>();
  const tableOf = (family: IPFamily) => {
    let t = tables.get(family);
    if (!t) tables.set(family, t = entry.memoryTable());
    return t;
  };
  return {
    mode,
    async apply(family, result) { tableOf(family).apply(result); },
    async dump(family) { return tableOf(family).dump(); },
  };
}
