// The narrow store host-local allocates through (as its backend.Store). Calls happen between
// `lock()` and `unlock()`; `reserve` is exclusive per IP and returns false when it is taken.

export interface IpamStore {
  lock(): void;
  unlock(): void;
  /** Records `ip` for (id, ifname) and remembers it as the range set's last reserved IP. */
  reserve(id: string, ifname: string, ip: string, rangeId: string): boolean;
  lastReservedIP(rangeId: string): string | undefined;
  /** Releases every IP held by (id, ifname); idempotent. Returns the released IPs. */
  releaseByID(id: string, ifname: string): string[];
  getByID(id: string, ifname: string): string[];
  /** Every reservation, for inspection and tests. */
  list(): Array<{ ip: string; id: string; ifname: string }>;
}

/** An in-memory store with the same semantics (used by the virtual kubelet and tests). */
export function buildMemoryIpamStore(): IpamStore {
  const byIp = new Map<string, { id: string; ifname: string }>();
  const last = new Map<string, string>();
  const matches = (e: { id: string; ifname: string }, id: string, ifname: string) =>
    e.id === id && e.ifname === ifname;
  return {
    lock() {},
    unlock() {},
    reserve(id, ifname, ip, rangeId) {
      if (byIp.has(ip)) return false;
      byIp.set(ip, { id: id.trim(), ifname });
      last.set(rangeId, ip);
      return true;
    },
    lastReservedIP: (rangeId) => last.get(rangeId),
    releaseByID(id, ifname) {
      const out: string[] = [];
      for (const [ip, e] of byIp) if (matches(e, id, ifname)) { byIp.delete(ip); out.push(ip); }
      return out;
    },
    getByID(id, ifname) {
      const out: string[] = [];
      for (const [ip, e] of byIp) if (matches(e, id, ifname)) out.push(ip);
      return out;
    },
    list: () => [...byIp].map(([ip, e]) => ({ ip, ...e })),
  };
}
