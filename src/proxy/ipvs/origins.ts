// RuleOrigin bookkeeping for the ipvs state without one map entry per real server: virtual
// servers are recorded (`10.96.0.1:443/TCP` → service port), real servers (`VS/ip:port`) are
// derived on demand from the IPVS model, so a 100k-endpoint sync does not build 100k entries.

import type { RuleOrigin } from '../backend.js';
import type { IpvsModel } from './ipvs-model.js';

export class IpvsOrigins implements ReadonlyMap<string, RuleOrigin> {
  constructor(
    /** Virtual-server key → `ns/name:port` of its service port. */
    private readonly servers: ReadonlyMap<string, string>,
    private readonly ipvs: IpvsModel,
  ) {}

  get(key: string): RuleOrigin | undefined {
    const sp = this.servers.get(key);
    if (sp !== undefined) return { servicePort: sp };
    const cut = key.indexOf('/', key.indexOf('/') + 1);
    if (cut < 0) return undefined;
    const vs = key.slice(0, cut);
    const endpoint = key.slice(cut + 1);
    const servicePort = this.servers.get(vs);
    if (servicePort === undefined || !this.ipvs.realServerMap(vs)?.has(endpoint)) return undefined;
    return { servicePort, endpoint };
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    let n = 0;
    for (const vs of this.servers.keys()) n += 1 + (this.ipvs.realServerMap(vs)?.size ?? 0);
    return n;
  }

  *entries(): MapIterator<[string, RuleOrigin]> {
    for (const [vs, servicePort] of this.servers) {
      yield [vs, { servicePort }];
      for (const endpoint of this.ipvs.realServerMap(vs)?.keys() ?? []) {
        yield [`${vs}/${endpoint}`, { servicePort, endpoint }];
      }
    }
  }

  *keys(): MapIterator<string> {
    for (const [k] of this.entries()) yield k;
  }

  *values(): MapIterator<RuleOrigin> {
    for (const [, v] of this.entries()) yield v;
  }

  [Symbol.iterator](): MapIterator<[string, RuleOrigin]> {
    return this.entries();
  }

  forEach(f: (value: RuleOrigin, key: string, map: ReadonlyMap<string, RuleOrigin>) => void): void {
    for (const [k, v] of this.entries()) f(v, k, this);
  }
}
