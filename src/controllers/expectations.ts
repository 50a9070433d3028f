// Controller expectations (upstream ControllerExpectations): after issuing N creates or deletes
// for a key, the controller waits to observe them through its informer before acting on the
// key again, so a stale cache never causes double creation. Expectations expire after `ttlMs`.

export interface Expectations {
  expect(key: string, adds: number, dels: number): void;
  creationObserved(key: string): void;
  deletionObserved(key: string): void;
  /** Lower expectations for writes that failed (they will never be observed). */
  lower(key: string, adds: number, dels: number): void;
  satisfied(key: string): boolean;
  delete(key: string): void;
}

export function buildExpectations(ttlMs = 5 * 60_000, now: () => number = Date.now): Expectations {
  const m = new Map<string, { adds: number; dels: number; at: number }>();
  const bump = (key: string, a: number, d: number) => {
    const e = m.get(key);
    if (!e) return;
    e.adds += a;
    e.dels += d;
  };
  return {
    expect(key, adds, dels) { m.set(key, { adds, dels, at: now() }); },
    creationObserved: (key) => bump(key, -1, 0),
    deletionObserved: (key) => bump(key, 0, -1),
    lower: (key, adds, dels) => bump(key, -adds, -dels),
    satisfied(key) {
      const e = m.get(key);
      if (!e) return true;
      return (e.adds <= 0 && e.dels <= 0) || now() - e.at > ttlMs;
    },
    delete: (key) => { m.delete(key); },
  };
}
