// The diff's shared shapes: a loaded table (one side), the semantic facts read from it, and
// the changes between two sides. Facts are `key → value` per Service port, so that two tables
// compare by meaning (hashed names resolved, counters and order dropped).

import type { RuleOrigin } from '../proxy/backend.js';
import type { ProxyMode } from '../proxy/registry.js';

/** A dump's format is its proxy mode's. */
export type DiffFormat = ProxyMode;

export interface LoadedTable {
  /** File name, `-`, or `node n1 @3`. */
  readonly label: string;
  readonly format: DiffFormat;
  readonly text: string;
  /** The compiler's bookkeeping (kdp snapshots only): chain/set name → Service port. */
  readonly origins?: ReadonlyMap<string, RuleOrigin>;
}

/** A service address found in a table: something to send probe packets to. */
export interface ProbeTarget {
  readonly kind: 'cluster' | 'external' | 'loadbalancer' | 'nodeport';
  /** Empty for NodePorts (probed on every node IP). */
  readonly ip: string;
  readonly port: number;
  readonly proto: 'tcp' | 'udp' | 'sctp';
}

/**
 * `group` is the Service port (`ns/name:port`) or '' for what belongs to no Service. Each fact
 * key appears once per group; the value ('' for a bare presence) is what can change.
 */
export interface FactTable {
  readonly groups: Map<string, Map<string, string>>;
  readonly targets: ProbeTarget[];
}

export type ChangeKind = 'added' | 'removed' | 'changed';

export interface SemanticChange {
  /** Set when the dumps hold more than one family (dual-stack): the family of the change. */
  readonly family?: 'IPv4' | 'IPv6';
  readonly group: string;
  readonly kind: ChangeKind;
  readonly key: string;
  readonly before?: string;
  readonly after?: string;
}
