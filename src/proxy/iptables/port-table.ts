// The rules of every service port as last written, in emission order and in runs ("chunks") of
// CHUNK ports. A partial sync rebuilds only the chunks holding a changed port and shares the
// others with the previous table, so its cost follows the change, not the number of services:
// each chunk keeps its ports' capture texts joined, written again as one block.

import type { PortRules } from './service-rules.js';

export const CHUNK = 128;

/** One run of service ports. Immutable once built. */
export interface Chunk {
  readonly keys: readonly string[];
  readonly rules: readonly PortRules[];
  /** The filter rules and the nat capture rules of the run, lines joined ('' = none). */
  readonly filter: string;
  readonly nat: string;
}

/** Immutable: a sync builds a new table (sharing unchanged chunks) and keeps the old one. */
export class PortTable {
  private pos: ReadonlyMap<string, number> | undefined;

  /** `positions` may be given when `order` is the order of an earlier table. */
  constructor(readonly order: readonly string[], readonly chunks: readonly Chunk[],
    positions?: ReadonlyMap<string, number>) {
    this.pos = positions;
  }

  /** Service-port key → index in `order`. */
  get positions(): ReadonlyMap<string, number> {
    this.pos ??= new Map(this.order.map((k, i) => [k, i]));
    return this.pos;
  }

  get(key: string): PortRules | undefined {
    const i = this.positions.get(key);
    return i === undefined ? undefined : this.chunks[Math.floor(i / CHUNK)]!.rules[i % CHUNK];
  }

  has(key: string): boolean {
    return this.positions.has(key);
  }

  *values(): IterableIterator<PortRules> {
    for (const c of this.chunks) yield* c.rules;
  }

  *entries(): IterableIterator<[string, PortRules]> {
    for (const c of this.chunks) {
      for (let i = 0; i < c.keys.length; i++) yield [c.keys[i]!, c.rules[i]!];
    }
  }
}
