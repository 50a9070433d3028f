// Simulated vs observed, for one probe. Every disagreement is a fidelity bug of the simulator
// (or of the kernel set-up it models): where the packet ended, with which destination and source
// address, the verdict, the interfaces the simulated path crosses, and per node the rules matched.

import type { Hop } from '../world.js';
import type { TraceDestination, TraceResult } from '../result.js';
import type { KernelRuleHit, KernelTrace, ObservedHop } from './observed.js';

export type FidelityAspect = 'destination' | 'address' | 'source' | 'verdict' | 'path' | 'rules';

export interface FidelityBug {
  readonly aspect: FidelityAspect;
  /** Node for `rules`, interface for `path`. */
  readonly where?: string;
  readonly simulated: string;
  readonly observed: string;
}

/** What the kernel did, as the comparison needs it. */
export interface ObservedOutcome {
  /** `pod ns/name` or `node n1` where the probe was delivered; undefined when nowhere. */
  readonly reached?: string;
  /** `ip:port` of the probe as delivered (after DNAT). */
  readonly destination?: string;
  /** Source address the receiver saw. */
  readonly sourceSeen?: string;
  readonly verdict: 'ACCEPT' | 'REJECT' | 'DROP';
  readonly hops: readonly ObservedHop[];
  readonly kernel: readonly KernelTrace[];
}

/** Per node, the kube-proxy rules as comparable keys: `<table> <chain>` (+ iptables target). */
export interface RuleComparison {
  readonly node: string;
  readonly simulated: readonly string[];
  readonly kernel: readonly string[];
  readonly onlySimulated: readonly string[];
  readonly onlyKernel: readonly string[];
}

export interface LiveComparison {
  /** The simulated branch the observation is compared with (the one the kernel took). */
  readonly branch?: TraceDestination;
  readonly rules: readonly RuleComparison[];
  readonly bugs: readonly FidelityBug[];
}

/** The simulated branch the kernel took: same pod/node reached, else same verdict. */
export function pickBranch(sim: TraceResult, obs: ObservedOutcome): TraceDestination | undefined {
  if (obs.reached) {
    // Refused by a pod whose listeners the tracer does not know (it claimed none: no `listens
    // on` hop) agrees with its delivered branch.
    const agrees = (d: TraceDestination) => d.verdict === obs.verdict || (obs.verdict === 'REJECT' &&
      d.verdict === 'ACCEPT' && !d.hops.some((h) => h.text.includes(' listens on ')));
    return sim.destinations.find((d) => d.reached === obs.reached && agrees(d) &&
      (obs.destination === undefined || d.destination === obs.destination)) ??
      sim.destinations.find((d) => d.reached === obs.reached && agrees(d));
  }
  return sim.destinations.find((d) => d.verdict === obs.verdict);
}

/** `requiredHops(branch)`: labels of the interfaces the probe must show on for that branch. */
export function compareLive(
  sim: TraceResult, obs: ObservedOutcome, requiredHops: (b: TraceDestination) => readonly string[],
): LiveComparison {
  const bugs: FidelityBug[] = [];
  const branch = pickBranch(sim, obs);
  const simReach = sim.destinations.map((d) => `${d.verdict} ${d.reached}`).join(', ');
  if (!branch) {
    bugs.push({
      aspect: obs.reached ? 'destination' : 'verdict', simulated: simReach,
      observed: obs.reached ? `${obs.verdict} ${obs.reached}` : obs.verdict,
    });
    return { rules: compareRules(undefined, obs.kernel), bugs };
  }
  if (branch.verdict === 'ACCEPT') {
    if (obs.destination && obs.destination !== branch.destination) {
      bugs.push({ aspect: 'address', simulated: branch.destination, observed: obs.destination });
    }
    if (obs.sourceSeen && obs.sourceSeen !== branch.sourceSeen) {
      bugs.push({ aspect: 'source', simulated: branch.sourceSeen, observed: obs.sourceSeen });
    }
  }
  for (const label of requiredHops(branch)) {
    const h = obs.hops.find((x) => x.label === label);
    if (h && !h.error && !h.forward) {
      bugs.push({
        aspect: 'path', where: label, simulated: 'the probe crosses this interface',
        observed: 'not seen there',
      });
    }
  }
  const rules = compareRules(branch, obs.kernel);
  for (const r of rules) {
    if (r.onlySimulated.length === 0 && r.onlyKernel.length === 0) continue;
    bugs.push({
      aspect: 'rules', where: r.node,
      simulated: r.onlySimulated.length ? `also matches ${r.onlySimulated.join('; ')}`
        : 'no other rule',
      observed: r.onlyKernel.length ? `also matched ${r.onlyKernel.join('; ')}` : 'no other rule',
    });
  }
  return { branch, rules, bugs };
}

/** Only kube-proxy's rules are simulated: its table (nftables), its chains and jumps (iptables). */
export function isKubeProxyRule(stage: string, chain: string, text: string): boolean {
  if (/^ip6? kube-proxy /.test(stage)) return true;
  if (/^(ip6?|inet) /.test(stage)) return false;
  return chain.startsWith('KUBE-') || /-j KUBE-/.test(text);
}

function iptablesTarget(stage: string, text: string): string {
  if (/^(ip6?|inet) /.test(stage)) return '';
  const m = /(?:^|\s)-[jg] (\S+)/.exec(text);
  return m ? ` → ${m[1]}` : '';
}

export function simulatedRuleKeys(hops: readonly Hop[], node: string): string[] {
  return hops
    .filter((h) => h.where === node && h.chain && h.rule !== undefined &&
      isKubeProxyRule(h.stage, h.chain, h.text))
    .map((h) => `${h.stage}${iptablesTarget(h.stage, h.text)}`);
}

export function kernelRuleKeys(rules: readonly KernelRuleHit[]): string[] {
  return rules.filter((r) => isKubeProxyRule(r.stage, r.chain, r.text))
    .map((r) => `${r.stage}${iptablesTarget(r.stage, r.text) || verdictTarget(r.stage, r.verdict)}`);
}

/** xtables-monitor prints no rule text for a rule replaced while it printed (a kube-proxy sync
 *  at that moment); its verdict still names the target (`return`, `jump KUBE-X`). */
function verdictTarget(stage: string, verdict: string): string {
  if (/^(ip6?|inet) /.test(stage) || !verdict) return '';
  const [word = '', to] = verdict.split(' ');
  if (to) return ` → ${to}`;
  return /^(return|accept|drop)$/.test(word) ? ` → ${word.toUpperCase()}` : '';
}

function compareRules(
  b: TraceDestination | undefined, kernel: readonly KernelTrace[],
): RuleComparison[] {
  return kernel.filter((k) => !k.error).map((k) => {
    const simulated = b ? simulatedRuleKeys(b.hops, k.node) : [];
    const got = kernelRuleKeys(k.rules);
    return {
      node: k.node, simulated, kernel: got,
      onlySimulated: multisetMinus(simulated, got), onlyKernel: multisetMinus(got, simulated),
    };
  });
}

function multisetMinus(a: readonly string[], b: readonly string[]): string[] {
  const left = new Map<string, number>();
  for (const x of b) left.set(x, (left.get(x) ?? 0) + 1);
  const out: string[] = [];
  for (const x of a) {
    const n = left.get(x) ?? 0;
    if (n > 0) left.set(x, n - 1);
    else out.push(x);
  }
  return out;
}
