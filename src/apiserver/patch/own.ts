// Property access for keys that come from requests. A plain object inherits `constructor` and
// `__proto__` from Object.prototype, so `o[k]` with such a key reads a prototype (a walk that
// then writes through it pollutes every object in the process) and `o[k] = v` with `__proto__`
// replaces o's prototype instead of setting a field. These helpers read own properties only and
// always write own, enumerable data properties, so such keys are ordinary field names (as they
// are to upstream's Go maps).

/** `o[k]` if `k` is o's own property, else undefined. */
export function getOwn(o: object, k: string): unknown {
  return Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined;
}

/** Sets own data property `k` of `o` (never a prototype's setter). */
export function setOwn(o: object, k: string, v: unknown): void {
  if (k === '__proto__') {
    Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  } else {
    (o as Record<string, unknown>)[k] = v;
  }
}
