// The iptables rule-table model shared by the proxy, the tracer and the diff: a document is
// the ordered lines of `iptables-save` output or `iptables-restore` input, each parsed; rules
// are argument lists (quotes removed). `tablesOf` gives the structured view
// (tables → chains (policy, counters) → rules).

export interface Counters {
  /** Decimal strings (kernel counters can exceed 2^53). */
  readonly packets: string;
  readonly bytes: string;
}

export type IptablesLine =
  /** `# ...` (text includes the `#`) or a blank line (text ''). */
  | { readonly kind: 'comment'; readonly text: string }
  | { readonly kind: 'table'; readonly name: string }
  /** `:NAME POLICY [p:b]`; policy `-` for user chains. */
  | { readonly kind: 'chain'; readonly name: string; readonly policy: string;
      readonly counters?: Counters }
  /** `[p:b] -A CHAIN args` / `-I CHAIN [n] args` / `-D CHAIN args` / `-R CHAIN n args`. */
  | { readonly kind: 'rule'; readonly op: '-A' | '-I' | '-D' | '-R'; readonly chain: string;
      readonly position?: number; readonly args: readonly string[];
      readonly counters?: Counters;
      /** The text after the chain (and position) when re-quoting `args` would differ. */
      readonly raw?: string }
  /** `-X [CHAIN]`, `-F [CHAIN]`, `-N CHAIN`, `-Z [CHAIN]`. */
  | { readonly kind: 'chain-op'; readonly op: '-X' | '-F' | '-N' | '-Z'; readonly chain?: string }
  | { readonly kind: 'commit' };

export interface IptablesDocument {
  readonly lines: readonly IptablesLine[];
  /** The text ended with a newline. */
  readonly trailingNewline: boolean;
}

export interface IptablesRule {
  readonly args: readonly string[];
  readonly counters?: Counters;
  /** The rule line as written (`-A CHAIN ...`, without counters). */
  readonly text: string;
}

export interface IptablesChain {
  readonly name: string;
  /** `-` for user chains, ACCEPT/DROP for built-in chains; '' when never declared. */
  policy: string;
  counters?: Counters;
  readonly rules: IptablesRule[];
  /** A `-X` line deletes it (restore input only). */
  deleted: boolean;
}

export interface IptablesTable {
  readonly name: string;
  /** In declaration order (chains first seen in a rule are appended). */
  readonly chains: IptablesChain[];
}

export const BUILTIN_CHAINS = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT',
  'POSTROUTING']);
