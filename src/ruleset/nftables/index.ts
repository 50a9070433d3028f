// The nftables rule-table model and its three text forms: the `nft -f` transaction kube-proxy
// writes, `nft list ruleset` text, and `nft -j list ruleset` JSON. See README.md.

export * from './model.js';
export { parseTransaction, parseOperation, formatTransaction,
  formatOperation } from './transaction.js';
export type { NftOp, NftVerb, NftChainSpec, NftSetSpec } from './transaction.js';
export { applyTransaction, dumpOps } from './fake.js';
export { sortTransactionText } from './canonical.js';
export { parseListText, formatListText } from './list-text.js';
export { parseListJson, formatListJson } from './list-json.js';
export type { NftJsonRule, ParsedJson } from './list-json.js';
export { normalizeRuleset, diffRulesets } from './normalize.js';
export type { DiffOptions } from './normalize.js';
export { parsePriority, formatPriority } from './priority.js';
