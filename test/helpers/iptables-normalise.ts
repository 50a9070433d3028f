// The kernel tests compare KUBE-* chains only; the normalisation itself is the product's
// (src/host/iptables-normalise.ts, also used by the drift check).
import { normaliseChains } from '../../src/host/iptables-normalise.js';

export { normaliseRule } from '../../src/host/iptables-normalise.js';

/** KUBE-* chains (not deleted) of every table → normalised rules, in order of name. */
export function normaliseDump(text: string): Map<string, string[]> {
  const kube = [...normaliseChains(text)].filter(([k]) => k.split('/')[1]!.startsWith('KUBE-'));
  return new Map(kube.sort(([a], [b]) => (a < b ? -1 : 1)));
}
