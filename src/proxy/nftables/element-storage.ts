// Upstream's nftElementStorage: what one shared set/map holds in the kernel, so a sync writes
// only the differences. On a full sync the container is flushed and refilled; on a partial sync
// only changed services' elements are ensured, and keys they no longer produce are deleted.
//
// kdp keeps, in addition, which service ports produced each key, so a partial sync need not
// revisit unchanged services (their elements cannot have changed) and still finds leftovers.

import type { TxWriter } from './tx-writer.js';

export class ElementStorage {
  /** key → value (`''` for set elements), as in the kernel after the pending transaction. */
  private readonly elements = new Map<string, string>();
  /** key → service-port key(s) that produced it (a Set only when shared). */
  private readonly owners = new Map<string, string | Set<string>>();
  /** Keys ensured during the current partial sync (a full sync needs no leftover check). */
  private readonly ensured = new Set<string>();
  private tracking = false;

  constructor(readonly kind: 'set' | 'map', readonly name: string) {}

  get size(): number {
    return this.elements.size;
  }

  /** Full sync: forget everything and flush the container. */
  reset(tx: TxWriter): void {
    this.elements.clear();
    this.owners.clear();
    this.ensured.clear();
    tx.flush(this.kind, this.name);
  }

  /** Add the element unless present with the same value; a new value is delete + add. */
  ensure(tx: TxWriter, owner: string, key: string, value?: string, comment?: string): void {
    const v = value ?? '';
    const existing = this.elements.get(key);
    if (existing === undefined) {
      tx.addElement(this.name, key, value, comment);
      this.elements.set(key, v);
    } else if (existing !== v) {
      tx.deleteElement(this.name, key);
      tx.addElement(this.name, key, value, comment);
      this.elements.set(key, v);
    }
    if (this.tracking) this.ensured.add(key);
    const o = this.owners.get(key);
    if (o === undefined) this.owners.set(key, owner);
    else if (typeof o === 'string') {
      if (o !== owner) this.owners.set(key, new Set([o, owner]));
    } else o.add(owner);
  }

  /** The owner no longer produces `key` (its service port is being rewritten or removed). */
  disown(owner: string, key: string): void {
    const o = this.owners.get(key);
    if (o === undefined) return;
    if (typeof o === 'string') {
      if (o === owner) this.owners.delete(key);
      return;
    }
    o.delete(owner);
    if (o.size === 1) this.owners.set(key, [...o][0]!);
  }

  /** A partial sync starts: remember which keys it ensures. */
  track(): void {
    this.ensured.clear();
    this.tracking = true;
  }

  /** Delete `candidates` that nobody produces any more (sorted, for a stable text). */
  cleanup(tx: TxWriter, candidates: Iterable<string>): void {
    const gone = [...new Set(candidates)].filter((k) =>
      !this.ensured.has(k) && !this.owners.has(k) && this.elements.has(k)).sort();
    for (const k of gone) {
      tx.deleteElement(this.name, k);
      this.elements.delete(k);
    }
    this.ensured.clear();
    this.tracking = false;
  }

  has(key: string): boolean {
    return this.elements.has(key);
  }
}
