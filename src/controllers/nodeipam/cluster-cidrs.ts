// kube-controller-manager's `--cluster-cidr` and node mask flags (cmd/kube-controller-manager
// core.go processCIDRs / setNodeCIDRMaskSizes): one CIDR, or two of different families for dual
// stack; node mask sizes default to /24 for IPv4 and /64 for IPv6 and are ordered like the
// cluster CIDRs (not v4 first). Messages are upstream's; errors are KDP_CONFIG.

import { canonicalCIDR, cidrList, familyBits, parseCIDR, type IPFamily } from '../../api/net.js';
import { kdpError } from '../../errors.js';

const DEFAULT_NODE_MASK: Readonly<Record<IPFamily, number>> = { IPv4: 24, IPv6: 64 };

export interface NodeMaskFlags {
  /** `--node-cidr-mask-size` (single stack only). */
  readonly nodeCIDRMaskSize?: number;
  readonly nodeCIDRMaskSizeIPv4?: number;
  readonly nodeCIDRMaskSizeIPv6?: number;
}

export interface ClusterCIDRs {
  /** Canonical, in flag order (the first is the primary family). */
  readonly cidrs: readonly string[];
  readonly families: readonly IPFamily[];
  /** Node mask size per cluster CIDR, same order. */
  readonly nodeMasks: readonly number[];
}

const bad = (msg: string): never => {
  throw kdpError('KDP_CONFIG', msg);
};

/** Parses `10.244.0.0/16` or `10.244.0.0/16,fd00:10:244::/56` (or a list) with its masks. */
export function parseClusterCIDRs(
  input: string | readonly string[], masks: NodeMaskFlags = {},
): ClusterCIDRs {
  const list = cidrList(input);
  if (list.length === 0) {
    bad('Controller: Must specify --cluster-cidr if --allocate-node-cidrs is set');
  }
  const parsed = list.map((s) => parseCIDR(s) ?? bad(`--cluster-cidr: invalid CIDR address: ${s}`));
  const families = parsed.map((p) => p.family);
  if (list.length > 1 && new Set(families).size < 2) {
    bad(`len of ClusterCIDRs==${list.length} and they are not configured as dual stack ` +
      '(at least one from each IPFamily');
  }
  if (list.length > 2) bad(`length of clusterCIDRs is:${list.length} more than max allowed of 2`);
  const nodeMasks = nodeMaskSizes(families, masks);
  parsed.forEach((p, i) => {
    if (p.prefix > nodeMasks[i]!) {
      bad('Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less than or ' +
        'equal to --node-cidr-mask-size configured for CIDR family');
    }
    if (p.family === 'IPv6' && nodeMasks[i]! - p.prefix > 16) {
      bad('New CIDR set failed; the node CIDR size is too big');
    }
  });
  return { cidrs: list.map((s) => canonicalCIDR(s)!), families, nodeMasks };
}

/** Upstream setNodeCIDRMaskSizes: the mask per cluster CIDR, with its flag checks. */
function nodeMaskSizes(families: readonly IPFamily[], m: NodeMaskFlags): number[] {
  const dual = families.length === 2;
  const perFamily = m.nodeCIDRMaskSizeIPv4 !== undefined || m.nodeCIDRMaskSizeIPv6 !== undefined;
  if (dual && m.nodeCIDRMaskSize !== undefined) {
    bad('usage of --node-cidr-mask-size is not allowed with dual-stack clusters');
  }
  if (!dual && m.nodeCIDRMaskSize !== undefined && perFamily) {
    bad('usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed if ' +
      '--node-cidr-mask-size is set. For dual-stack clusters please unset it and use IPFamily ' +
      'specific flags');
  }
  if (!dual && families[0] === 'IPv6' && m.nodeCIDRMaskSizeIPv4 !== undefined) {
    bad('usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster');
  }
  if (!dual && families[0] === 'IPv4' && m.nodeCIDRMaskSizeIPv6 !== undefined) {
    bad('usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster');
  }
  return families.map((f) => {
    const size = m.nodeCIDRMaskSize
      ?? (f === 'IPv4' ? m.nodeCIDRMaskSizeIPv4 : m.nodeCIDRMaskSizeIPv6) ?? DEFAULT_NODE_MASK[f];
    if (!Number.isInteger(size) || size < 0 || size > familyBits(f)) {
      bad(`--node-cidr-mask-size: ${size} is not a valid ${f} mask size`);
    }
    return size;
  });
}
