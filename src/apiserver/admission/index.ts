// kdp's admission chain, in upstream's order: NamespaceLifecycle, ServiceIPs (upstream does this
// in the Service storage; kdp's storage is generic, so it is a plugin here),
// DefaultTolerationSeconds.

import type { AdmissionPlugin } from '../pipeline-types.js';
import { buildDefaultTolerationSecondsPlugin } from './default-toleration-seconds.js';
import { buildNamespaceLifecyclePlugin } from './namespace-lifecycle.js';
import type { Random } from './range-allocator.js';
import { buildServiceIPsPlugin } from './service-ips.js';
import { toAdmissionSource, type AdmissionSource, type GroupedAdmissionSource } from './source.js';

export { buildDefaultTolerationSecondsPlugin } from './default-toleration-seconds.js';
export { buildNamespaceLifecyclePlugin, IMMORTAL_NAMESPACES } from './namespace-lifecycle.js';
export {
  buildServiceIPsPlugin, type ServiceAllocationPlugin, type ServiceIPsOptions,
} from './service-ips.js';
export type { AdmissionSource, GroupedAdmissionSource } from './source.js';

export interface AdmissionOptions {
  readonly serviceCIDRs: readonly string[];
  /** Default `30000-32767`. */
  readonly nodePortRange?: string;
  /** Either signature; see `toAdmissionSource`. */
  readonly source: AdmissionSource | GroupedAdmissionSource;
  readonly random?: Random;
}

export const DEFAULT_NODE_PORT_RANGE = '30000-32767';

/**
 * The plugins to pass to the API server. The ServiceIPs plugin (second) also has `repair()`;
 * it repairs itself lazily before its first allocation, so calling it is optional.
 */
export function buildAdmissionPlugins(opts: AdmissionOptions): AdmissionPlugin[] {
  const source = toAdmissionSource(opts.source);
  return [
    buildNamespaceLifecyclePlugin(source),
    buildServiceIPsPlugin({ serviceCIDRs: opts.serviceCIDRs,
      nodePortRange: opts.nodePortRange ?? DEFAULT_NODE_PORT_RANGE, source,
      ...(opts.random ? { random: opts.random } : {}) }),
    buildDefaultTolerationSecondsPlugin(),
  ];
}
