// The kernel RuleApplier of netns mode: kube-proxy's compiled syncs applied inside a node's
// namespace with the commands of the mode's registry entry (`kernel`): iptables, each artifact
// one `iptables-restore --noflush` (atomic per call) and on full syncs upstream's jumps from the
// built-in chains ensured from what `iptables-save` shows; nftables, each artifact one `nft -f -`
// transaction. A failed apply throws and the kernel keeps the previous rules. A mode without
// kernel commands (ipvs: kdp loads no IP_VS module) is refused up front (`assertKernelMode`).
// Every sync the kernel accepted is also applied to an in-memory shadow (the fakes of virtual
// mode), so `drift` can compare what was compiled with what the kernel lists back.

import type { RuleApplier } from './applier.js';
import { buildMemoryApplier } from './applier.js';
import type { ProxyMode } from './backend.js';
import { kernelRulesOf } from './registry.js';
import type { IPFamily } from './types.js';
import type { HostExec } from '../host/exec.js';
import { applySysctls } from '../host/sysctls.js';

/** Throws KDP_CONFIG for modes the kernel data plane cannot apply. */
export function assertKernelMode(mode: ProxyMode): void {
  kernelRulesOf(mode);
}

export function buildKernelApplier(exec: HostExec, netns: string, mode: ProxyMode): RuleApplier {
  const k = kernelRulesOf(mode);
  const shadow = buildMemoryApplier(mode);
  /** Families whose shadow refused a sync the kernel took: their drift cannot be judged. */
  const unjudged = new Set<IPFamily>();
  const dump = (family: IPFamily) => k.dump(exec, netns, family);

  return {
    mode,
    dump,
    setSysctls: (writes) => applySysctls(exec, netns, writes),
    async restore(family) {
      const want = await shadow.dump(family);
      if (!want.trim()) return;
      await k.restore(exec, netns, family, want);
    },
    async drift(family, kernelDump) {
      if (unjudged.has(family)) return [];
      const [want, have] = [await shadow.dump(family), kernelDump ?? await dump(family)];
      return k.drift(want, have);
    },
    async apply(family, result) {
      for (const a of result.artifacts) {
        // Chunked artifacts go to stdin piece by piece (no flat copy of a large first sync).
        await k.apply(exec, netns, family, a.chunks ?? a.text);
      }
      if (result.full) await k.afterFullSync?.(exec, netns, family);
      try {
        await shadow.apply(family, result);
        if (result.full) unjudged.delete(family);
      } catch {
        unjudged.add(family);
      }
    },
  };
}
