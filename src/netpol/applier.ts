// Where a node's compiled `inet kdp-netpol` table goes. Both appliers take the compiler's full
// text, which re-creates the table inside one transaction (add, delete, add, everything), so an
// apply is all-or-nothing: a refused text leaves the previous table — and its rules — in place.
// - kernel (netns mode): one `nft -f -` in the node's network namespace, through HostExec. After
//   the first, each apply sends only the difference from the last applied text (delta.ts: the
//   changed elements, chains and sets) as one transaction; if the kernel refuses it (e.g. the
//   table was changed behind kdp's back), the full text follows.
// - memory (virtual mode, and the kernel applier's fake): the text is parsed by the strict
//   interpreter (nft-sim) and kept; text it cannot read is refused the same way.

import type { HostExec } from '../host/exec.js';
import { applyNft, nftList } from '../host/rules.js';
import { parseNetpolNft } from './nft-sim.js';
import { netpolDelta } from './delta.js';
import { NETPOL_TABLE } from './nftables.js';

export interface NetpolApplier {
  /** Replaces the node's table with `text` atomically; rejects (table unchanged) on refusal. */
  apply(text: string): Promise<void>;
  /** The last text applied successfully (undefined before the first apply). */
  current(): string | undefined;
  /** The table as the data plane lists it: `nft list table` in netns mode, else `current()`. */
  list(): Promise<string>;
  /** Removes the table (the node's agents stop); a missing table is not an error. */
  remove(): Promise<void>;
}

export function buildMemoryNetpolApplier(): NetpolApplier {
  let text: string | undefined;
  return {
    async apply(t) {
      parseNetpolNft(t); // throws on anything the compiler does not emit
      text = t;
    },
    current: () => text,
    list: async () => text ?? '',
    async remove() { text = undefined; },
  };
}

export interface KernelNetpolApplier extends NetpolApplier {
  /** Applies so far: full rewrites and element-only (incremental) transactions. */
  readonly stats: { readonly full: number; readonly incremental: number };
}

export function buildKernelNetpolApplier(exec: HostExec, netns: string): KernelNetpolApplier {
  let text: string | undefined;
  const stats = { full: 0, incremental: 0 };
  return {
    stats,
    async apply(t) {
      const delta = text === undefined ? undefined : netpolDelta(text, t);
      if (delta === '') { text = t; return; }
      if (delta !== undefined) {
        try {
          await applyNft(exec, netns, delta);
          text = t;
          stats.incremental++;
          return;
        } catch { /* refused as a whole: the full rewrite below decides */ }
      }
      await applyNft(exec, netns, t);
      text = t;
      stats.full++;
    },
    current: () => text,
    list: () => nftList(exec, netns, ['list', 'table', 'inet', NETPOL_TABLE]),
    async remove() {
      // `add` first so the `delete` in the same transaction cannot fail on a missing table.
      await applyNft(exec, netns, `add table inet ${NETPOL_TABLE}\ndelete table inet ${NETPOL_TABLE}\n`);
      text = undefined;
    },
  };
}
