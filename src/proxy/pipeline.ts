// One proxier's input side: the two change trackers of its family feeding one backend, as
// upstream's Proxier.OnServiceUpdate / OnEndpointSliceUpdate / syncProxyRules. The node agent
// and the offline compiler both drive backends through this.

import type { EndpointSlice, Service } from '../api/types.js';
import type { Proxier, SyncResult } from './backend.js';
import { EndpointsChangeTracker } from './endpoints-change-tracker.js';
import type { ProblemReporter } from './input-check.js';
import { ServiceChangeTracker } from './service-change-tracker.js';

export class ProxyPipeline {
  private readonly services: ServiceChangeTracker;
  private readonly endpoints: EndpointsChangeTracker;

  /** `report` hears of every Service, EndpointSlice, port or endpoint left out as invalid. */
  constructor(readonly proxier: Proxier, report?: ProblemReporter) {
    const c = proxier.config;
    this.services = new ServiceChangeTracker({
      family: c.family, loadBalancerIPMode: c.featureGates?.LoadBalancerIPMode ?? true, report,
    });
    this.endpoints = new EndpointsChangeTracker({
      family: c.family, nodeName: c.nodeName,
      preferSameTrafficDistribution: c.featureGates?.PreferSameTrafficDistribution ?? true,
      report,
    });
  }

  /** Add: (undefined, svc); update: (old, new); delete: (svc, undefined). */
  onService(previous: Service | undefined, current: Service | undefined): boolean {
    return this.services.update(previous, current);
  }

  onEndpointSlice(slice: EndpointSlice, removed = false): boolean {
    return this.endpoints.update(slice, removed);
  }

  /**
   * Compiles one sync from everything recorded since the last one. The backend decides
   * whether it may be partial; call `commit` with the apply outcome afterwards.
   */
  sync(): SyncResult {
    const s = this.services.checkout();
    const e = this.endpoints.checkout();
    const changed = new Set<string>(s.changedKeys);
    for (const k of e.changedKeys) changed.add(k);
    return this.proxier.sync({ services: s.services, endpoints: e.endpoints, changed });
  }

  commit(applied: boolean): void {
    this.proxier.commit(applied);
  }
}
