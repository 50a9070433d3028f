// What removes everything the nftables proxier created (upstream CleanupLeftovers): the
// `kube-proxy` table of each family, each deleted in its own transaction so a family without
// the table (nft: "No such file or directory") does not stop the other.

import type { Artifact } from '../backend.js';
import { KUBE_PROXY_TABLE } from './naming.js';

/** One `nft -f` transaction per family; a "not found" failure of either is not an error. */
export function cleanupArtifacts(): Artifact[] {
  return (['ip', 'ip6'] as const).map((family) => ({
    kind: 'nft',
    text: `delete table ${family} ${KUBE_PROXY_TABLE}\n`,
  }));
}

/** True when an nft error message means the table was already gone. */
export function isNotFoundError(message: string): boolean {
  return /No such file or directory/.test(message);
}
