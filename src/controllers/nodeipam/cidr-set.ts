// Upstream's CIDR set (nodeipam cidr_set.go): the cluster CIDR cut into node-sized blocks,
// handed out round-robin from the block after the last one taken (index 0 first), so a released
// block is reused only when the scan wraps. `occupy`/`release` mark every block a CIDR covers.

import { cidrsOverlap, formatCIDR, parseCIDR, type ParsedCIDR } from '../../api/net.js';
import { kdpError } from '../../errors.js';

export interface CidrSet {
  allocateNext(): string;
  occupy(cidr: string): void;
  release(cidr: string): void;
  readonly capacity: number;
  used(): number;
}

export function buildCidrSet(clusterCIDR: string, nodeMask: number): CidrSet {
  const c = parseCIDR(clusterCIDR);
  if (!c) throw kdpError('KDP_CONFIG', `invalid cluster CIDR ${clusterCIDR}`);
  if (c.prefix > nodeMask) {
    throw kdpError('KDP_CONFIG', 'Controller: Invalid --cluster-cidr, mask size of cluster CIDR ' +
      'must be less than or equal to --node-cidr-mask-size configured for CIDR family');
  }
  const bits = c.family === 'IPv4' ? 32 : 128;
  if (nodeMask - c.prefix > 16 && c.family === 'IPv6') {
    throw kdpError('KDP_CONFIG', 'New CIDR set failed; the node CIDR size is too big');
  }
  const capacity = 2 ** (nodeMask - c.prefix);
  const shift = BigInt(bits - nodeMask);
  const taken = new Uint8Array(capacity);
  let used = 0;
  let next = 0;
  const blockCidr = (i: number) =>
    formatCIDR({ family: c.family, base: c.base + (BigInt(i) << shift), prefix: nodeMask });

  function span(cidr: string): [number, number] {
    const p: ParsedCIDR | null = parseCIDR(cidr);
    if (!p || !cidrsOverlap(p, c!) || p.prefix < c!.prefix) {
      throw kdpError('KDP_CONFIG', `cidr ${cidr} is out the range of cluster cidr ${clusterCIDR}`);
    }
    const first = Number((p.base - c!.base) >> shift);
    const count = p.prefix >= nodeMask ? 1 : 2 ** (nodeMask - p.prefix);
    return [first, Math.min(capacity, first + count)];
  }

  return {
    capacity,
    used: () => used,
    allocateNext() {
      if (used >= capacity) {
        throw kdpError('KDP_CONFLICT', 'CIDR allocation failed; there are no remaining CIDRs ' +
          'left to allocate in the accepted range');
      }
      for (let k = 0; k < capacity; k++) {
        const i = (next + k) % capacity;
        if (taken[i]) continue;
        taken[i] = 1;
        used++;
        next = (i + 1) % capacity;
        return blockCidr(i);
      }
      throw kdpError('KDP_INTERNAL', 'cidr set accounting is inconsistent');
    },
    occupy(cidr) {
      const [a, b] = span(cidr);
      for (let i = a; i < b; i++) if (!taken[i]) { taken[i] = 1; used++; }
    },
    release(cidr) {
      const [a, b] = span(cidr);
      for (let i = a; i < b; i++) if (taken[i]) { taken[i] = 0; used--; }
    },
  };
}

export { formatCIDR };

/**
 * One block from each set, in order (a dual-stack node's podCIDRs); all or nothing: when a set
 * is exhausted the blocks already taken go back, and the error names that set's index.
 */
export function allocateFromEach(sets: readonly CidrSet[]): string[] {
  const got: string[] = [];
  for (const [idx, set] of sets.entries()) {
    try {
      got.push(set.allocateNext());
    } catch (e) {
      got.forEach((x, i) => sets[i]!.release(x));
      throw kdpError('KDP_CONFLICT',
        `failed to allocate cidr from cluster cidr at idx:${idx}: ${(e as Error).message}`);
    }
  }
  return got;
}
