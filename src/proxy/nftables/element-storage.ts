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
  /** key → service-port keys that produced it. */
  private readonly owners = new Map<string, Set<string>>();
  /** Keys ensured during the current sync. */
  private readonly ensured = new Set<string>();

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
    this.ensured.add(key);
    let o = this.owners.get(key);
    if (!o) this.owners.set(key, (o = new Set()));
    o.add(owner);
  }

  /** The owner no longer produces `key` (its service port is being rewritten or removed). */
  disown(owner: string, key: string): void {
    const o = this.owners.get(key);
    if (!o) return;
    o.delete(owner);
    if (o.size === 0) this.owners.delete(key);
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
  }

  has(key: string): boolean {
    return this.elements.has(key);
  }
}
