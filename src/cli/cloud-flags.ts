// The lab cloud's flags (`kdp up`, `kdp controller-manager`): the cloud-controller-manager's
// service controller gives LoadBalancer Services addresses from `--lb-cidr`.

import { DEFAULT_LB_CIDR, parseCloudProvider, parseLbCidrs } from '../controllers/service-lb/pool.js';

export const CLOUD_FLAGS = [
  { name: 'cloud-provider', type: 'string', default: 'kdp',
    help: 'kdp: the lab cloud assigns LoadBalancer addresses; none: they stay <pending>' },
  { name: 'lb-cidr', type: 'string', default: DEFAULT_LB_CIDR,
    help: 'LoadBalancer address pool: one CIDR per IP family, comma-separated' },
] as const;

/** Validated before anything starts (errors name the flag). */
export function cloudFlags(flags: Record<string, unknown>): { cloudProvider: 'kdp' | 'none'; lbCIDR: string } {
  const cloudProvider = parseCloudProvider(flags['cloud-provider'] as string | undefined);
  const lbCIDR = parseLbCidrs((flags['lb-cidr'] as string | undefined) ?? DEFAULT_LB_CIDR).join(',');
  return { cloudProvider, lbCIDR };
}
