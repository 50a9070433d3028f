// RuleOrigin of every per-service chain and affinity set, computed on demand from the
// proxier's service ports (a large table has ~100k such objects; building a map of them on
// every sync would cost more than the sync). Names encode their service port and endpoint:
// `endpoint-HASH-ns/name/proto/port__ip/port`; names upstream truncated (over 240 characters)
// are looked up in a small side map.

import type { RuleOrigin } from '../backend.js';
import { joinHostPort } from '../keys.js';
import { servicePortNameString, type IPFamily, type ServicePortInfo } from '../types.js';

export interface OriginSource {
  readonly svc: ServicePortInfo;
  readonly objects: {
    readonly chains: readonly string[];
    readonly affinitySets: readonly string[];
  };
}

/** `service-HASH-ns/name/tcp/port…` → the service-port map key `ns/name:port/TCP`. */
export function portKeyOfName(name: string): string | undefined {
  const m = /^[a-z]+-[A-Z2-7]{8}-([^/]+)\/([^/]+)\/([a-z]+)\/([^/_]*)(?:__|$)/.exec(name);
  if (!m) return undefined;
  const [, ns, svc, proto, port] = m;
  return `${ns}/${svc}${port ? `:${port}` : ''}/${proto!.toUpperCase()}`;
}

/** The `ip:port` of an endpoint chain or affinity set name. */
function endpointOfName(name: string, family: IPFamily): string | undefined {
  const m = /__([^/]+)\/(\d+)$/.exec(name);
  if (!m) return undefined;
  const ip = family === 'IPv6' ? m[1]!.replaceAll('.', ':') : m[1]!;
  return joinHostPort(ip, Number(m[2]));
}

export class LazyOrigins implements ReadonlyMap<string, RuleOrigin> {
  constructor(
    private readonly ports: ReadonlyMap<string, OriginSource>,
    private readonly family: IPFamily,
    /** Truncated names → their service-port key. */
    private readonly truncated: ReadonlyMap<string, string>,
  ) {}

  private owner(name: string): OriginSource | undefined {
    const key = this.truncated.get(name) ?? portKeyOfName(name);
    const p = key === undefined ? undefined : this.ports.get(key);
    if (!p) return undefined;
    return p.objects.chains.includes(name) || p.objects.affinitySets.includes(name) ? p : undefined;
  }

  private originOf(p: OriginSource, name: string): RuleOrigin {
    const servicePort = servicePortNameString(p.svc.name);
    const isEp = name.startsWith('endpoint-') || name.startsWith('affinity-');
    const endpoint = isEp ? endpointOfName(name, this.family) : undefined;
    return endpoint === undefined ? { servicePort } : { servicePort, endpoint };
  }

  get(name: string): RuleOrigin | undefined {
    const p = this.owner(name);
    return p && this.originOf(p, name);
  }

  has(name: string): boolean {
    return this.owner(name) !== undefined;
  }

  get size(): number {
    let n = 0;
    for (const p of this.ports.values()) {
      n += p.objects.chains.length + p.objects.affinitySets.length;
    }
    return n;
  }

  *entries(): MapIterator<[string, RuleOrigin]> {
    for (const p of this.ports.values()) {
      for (const n of [...p.objects.chains, ...p.objects.affinitySets]) {
        yield [n, this.originOf(p, n)];
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

  forEach(cb: (value: RuleOrigin, key: string, map: ReadonlyMap<string, RuleOrigin>) => void):
    void {
    for (const [k, v] of this.entries()) cb(v, k, this);
  }
}
