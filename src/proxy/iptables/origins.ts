// The origins of one sync's chains, built only when someone asks: a full ruleset has a chain
// per endpoint (100k+), and most syncs are never traced.

import type { RuleOrigin } from '../backend.js';
import type { PortRules } from './service-rules.js';

export class LazyOrigins implements ReadonlyMap<string, RuleOrigin> {
  private map: Map<string, RuleOrigin> | undefined;

  /** `rules` must not change afterwards (each sync passes its own table). */
  constructor(private readonly rules: { values(): Iterable<PortRules> }) {}

  private get m(): Map<string, RuleOrigin> {
    if (!this.map) {
      this.map = new Map();
      for (const r of this.rules.values()) {
        const base = { servicePort: r.servicePort };
        r.chains.forEach((n, i) => {
          const endpoint = r.chainEndpoints[i];
          this.map!.set(n, endpoint === undefined ? base : { ...base, endpoint });
        });
      }
    }
    return this.map;
  }

  get size(): number { return this.m.size; }
  get(k: string): RuleOrigin | undefined { return this.m.get(k); }
  has(k: string): boolean { return this.m.has(k); }
  forEach(fn: (v: RuleOrigin, k: string, map: ReadonlyMap<string, RuleOrigin>) => void): void {
    this.m.forEach((v, k) => fn(v, k, this));
  }
  entries(): MapIterator<[string, RuleOrigin]> { return this.m.entries(); }
  keys(): MapIterator<string> { return this.m.keys(); }
  values(): MapIterator<RuleOrigin> { return this.m.values(); }
  [Symbol.iterator](): MapIterator<[string, RuleOrigin]> { return this.m[Symbol.iterator](); }
}
