// The local-traffic detector's match arguments, as upstream's proxyutil.LocalTrafficDetector:
// CIDR modes match the source address, interface modes the input interface.

import type { DetectLocal } from '../backend.js';

export interface LocalDetector {
  readonly implemented: boolean;
  /** Matches traffic from local pods (e.g. `-s 10.244.0.0/16`). */
  readonly ifLocal: readonly string[];
  /** Matches traffic not from local pods (e.g. `! -s 10.244.0.0/16`). */
  readonly ifNotLocal: readonly string[];
}

export function buildLocalDetector(d: DetectLocal): LocalDetector {
  switch (d.mode) {
    case 'ClusterCIDR':
    case 'NodeCIDR': {
      const cidr = d.cidrs[0];
      if (cidr === undefined) break;
      return { implemented: true, ifLocal: ['-s', cidr], ifNotLocal: ['!', '-s', cidr] };
    }
    case 'BridgeInterface':
      if (!d.interfaceName) break;
      return {
        implemented: true,
        ifLocal: ['-i', d.interfaceName],
        ifNotLocal: ['!', '-i', d.interfaceName],
      };
    case 'InterfaceNamePrefix': {
      if (!d.interfaceName) break;
      const name = `${d.interfaceName}+`;
      return { implemented: true, ifLocal: ['-i', name], ifNotLocal: ['!', '-i', name] };
    }
    default:
      break;
  }
  return { implemented: false, ifLocal: [], ifNotLocal: [] };
}
