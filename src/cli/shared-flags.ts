// Flags several commands share. A module of its own so that a command that only needs
// `--data-dir` does not load `kdp up`'s whole cluster with it (kdp starts in ~0.2 s).

import type { NodeMaskFlags } from '../controllers/nodeipam/cluster-cidrs.js';

export const DATA_DIR_FLAG = { name: 'data-dir', type: 'string', help: 'cluster data directory (default $KDP_DATA_DIR or ~/.kdp)' } as const;

/** On every command that opens the embedded store (src/store/README.md, "Damaged WAL bytes"). */
export const REPAIR_FLAG = { name: 'repair', type: 'boolean', default: false,
  help: 'start even if the store\'s WAL is damaged: drop everything from the first bad record (kept aside as *.damaged-<time>)' } as const;

/** kube-controller-manager's node mask flags (also `kdp controller-manager`'s). */
export const NODE_MASK_FLAGS = [
  { name: 'node-cidr-mask-size', type: 'number',
    help: 'single stack: each node\'s podCIDR size (default /24 IPv4, /64 IPv6)' },
  { name: 'node-cidr-mask-size-ipv4', type: 'number', help: 'dual stack: IPv4 podCIDR size (default 24)' },
  { name: 'node-cidr-mask-size-ipv6', type: 'number', help: 'dual stack: IPv6 podCIDR size (default 64)' },
] as const;

export function nodeMaskFlags(flags: Record<string, unknown>): NodeMaskFlags {
  return {
    nodeCIDRMaskSize: flags['node-cidr-mask-size'] as number | undefined,
    nodeCIDRMaskSizeIPv4: flags['node-cidr-mask-size-ipv4'] as number | undefined,
    nodeCIDRMaskSizeIPv6: flags['node-cidr-mask-size-ipv6'] as number | undefined,
  };
}
