// Simulation against kernel: what the tracer says a flow does (verdict, possible endpoints and
// whether each is masqueraded, session affinity) and what real probes observed, compared into
// a list of disagreements — a fidelity bug report.

import type { TraceResult } from '../result.js';
import type { ProbeOutcome } from './prober.js';
import { normaliseHostPort } from './reply.js';

export type FlowVerdict = 'DNAT' | 'NONE' | 'ACCEPT' | 'DROP' | 'REJECT';

export interface SimulatedFlow {
  readonly verdict: FlowVerdict;
  /** DNAT only: every possible endpoint (`ip:port` / `[v6]:port`) → masqueraded on that
   *  branch. */
  readonly endpoints: ReadonlyMap<string, boolean>;
  /** NONE / ACCEPT: the untouched packet is masqueraded. */
  readonly masquerade: boolean;
  /** The chosen endpoint sticks to the client (ClientIP affinity). */
  readonly affinity: boolean;
}

const AFFINITY = /--rcheck|--set\b|-m recent|@affinity|affinity-/;

/** The trace in the flow's terms (as test/helpers/flows.ts `flowOutcome`, per branch). */
export function simulatedFlow(r: TraceResult, destination: string): SimulatedFlow {
  const dst = normaliseHostPort(destination) ?? destination;
  const affinity = r.destinations.some((d) => d.hops.some((h) => AFFINITY.test(h.text)));
  if (r.verdict !== 'ACCEPT') {
    return { verdict: r.verdict as FlowVerdict, endpoints: new Map(), masquerade: false, affinity };
  }
  const only = r.destinations.length === 1 ? r.destinations[0]! : undefined;
  if (only && only.destination === dst) {
    const verdict = only.reached.startsWith('node ') ? 'ACCEPT' : 'NONE';
    return { verdict, endpoints: new Map(), masquerade: only.masquerade, affinity };
  }
  const endpoints = new Map<string, boolean>();
  for (const d of r.destinations) {
    endpoints.set(d.destination, (endpoints.get(d.destination) ?? false) || d.masquerade);
  }
  return { verdict: 'DNAT', endpoints, masquerade: r.masquerade, affinity };
}

export interface ProbeObservation {
  readonly verdict: FlowVerdict;
  readonly endpoint?: string;
  /** undefined: not observable (a node source masqueraded to its own address looks unchanged). */
  readonly masquerade?: boolean;
  readonly responder?: string;
}

export interface ObserveContext {
  /** Plain source IP of the flow. */
  readonly source: string;
  /** Normalised original destination. */
  readonly destination: string;
  /** The source is one of the node's own addresses. */
  readonly nodeSource: boolean;
}

const ipOf = (hostPort: string) => hostPort.replace(/^\[/, '').replace(/\]?:\d+$/, '');

/** reply at the original destination → ACCEPT (the node's responder) or NONE (anyone else);
 *  reply elsewhere → DNAT; refused / unreachable → REJECT; timeout → DROP. */
export function observeProbe(o: ProbeOutcome, ctx: ObserveContext): ProbeObservation {
  if (o.outcome === 'timeout') return { verdict: 'DROP' };
  if (o.outcome !== 'reply') return { verdict: 'REJECT' };
  const served = o.servedBy ?? `?${o.responder ?? 'unknown'}`;
  const seen = o.seenSource ? ipOf(o.seenSource) : undefined;
  let masquerade: boolean | undefined = seen !== undefined && seen !== ctx.source;
  if (!masquerade && ctx.nodeSource) masquerade = undefined;
  const base = { masquerade, responder: o.responder };
  if (served !== ctx.destination) return { verdict: 'DNAT', endpoint: served, ...base };
  return { verdict: o.responder === 'node' ? 'ACCEPT' : 'NONE', ...base };
}

export interface FlowId {
  readonly scenario: string;
  readonly mode: string;
  readonly flow: string;
}

export interface Disagreement extends FlowId {
  readonly field: 'verdict' | 'endpoints' | 'masquerade' | 'affinity';
  readonly simulated: string;
  readonly observed: string;
}

/** Every endpoint must be seen when there are at most this many (and no affinity). */
export const ALL_SEEN_MAX = 4;

function counts(values: readonly string[]): string {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m].sort(([a], [b]) => a.localeCompare(b)).map(([v, n]) => `${v}×${n}`).join(', ');
}

export function compareFlow(id: FlowId, sim: SimulatedFlow,
  obs: readonly ProbeObservation[]): Disagreement[] {
  const out: Disagreement[] = [];
  const add = (field: Disagreement['field'], simulated: string, observed: string) =>
    out.push({ ...id, field, simulated, observed });
  const verdicts = obs.map((o) => o.verdict);
  if (verdicts.some((v) => v !== sim.verdict)) add('verdict', sim.verdict, counts(verdicts));
  const hits = obs.filter((o) => o.verdict === sim.verdict);
  if (sim.verdict === 'DNAT' && hits.length) compareEndpoints(sim, hits, add);
  const wantMasq = (o: ProbeObservation) =>
    (sim.verdict === 'DNAT' ? sim.endpoints.get(o.endpoint ?? '') : sim.masquerade);
  const wrongMasq = hits.filter((o) => {
    const want = wantMasq(o);
    return o.masquerade !== undefined && want !== undefined && o.masquerade !== want;
  });
  if (wrongMasq.length) {
    const first = wrongMasq[0]!;
    add('masquerade', String(wantMasq(first)),
      `${String(first.masquerade)} (${wrongMasq.length}/${hits.length} probes)`);
  }
  return out;
}

function compareEndpoints(sim: SimulatedFlow, hits: readonly ProbeObservation[],
  add: (f: Disagreement['field'], s: string, o: string) => void): void {
  const seen = new Set(hits.map((o) => o.endpoint ?? '?'));
  const simList = [...sim.endpoints.keys()].sort();
  const show = (l: readonly string[]) => (l.length > 6 ? `${l.length} endpoints` : l.join(', '));
  const extra = [...seen].filter((e) => !sim.endpoints.has(e)).sort();
  if (extra.length) add('endpoints', show(simList), `outside the set: ${extra.join(', ')}`);
  if (sim.affinity) {
    if (seen.size > 1) add('affinity', 'one endpoint per client', [...seen].sort().join(', '));
  } else if (simList.length <= ALL_SEEN_MAX) {
    const missing = simList.filter((e) => !seen.has(e));
    if (missing.length) {
      add('endpoints', show(simList),
        `never reached in ${hits.length} probes: ${missing.join(', ')}`);
    }
  }
}
