// Where a node's compiled `inet kdp-netpol` table goes. Both appliers take the compiler's full
// text, which re-creates the table inside one transaction (add, delete, add, everything), so an
// apply is all-or-nothing: a refused text leaves the previous table — and its rules — in place.
// - kernel (netns mode): one `nft -f -` in the node's network namespace, through HostExec.
// - memory (virtual mode, and the kernel applier's fake): the text is parsed by the strict
//   interpreter (nft-sim) and kept; text it cannot read is refused the same way.

import type { HostExec } from '../host/exec.js';
import { applyNft, nftList } from '../host/rules.js';
import { parseNetpolNft } from './nft-sim.js';
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

export function buildKernelNetpolApplier(exec: HostExec, netns: string): NetpolApplier {
  let text: string | undefined;
  return {
    async apply(t) {
      await applyNft(exec, netns, t);
      text = t;
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
