// Runs a scenario's packet flows through the tracer and through real packets in a live lab with
// the same rules applied, per mode, and reports where they disagree. One lab per scenario: the
// modes take turns on its node (rules replaced, conntrack flushed), flows run one at a time
// with conntrack flushed in between, the probes of one flow run concurrently after the first.

import type { HostExec } from '../../host/exec.js';
import { parseHostPort } from '../packet.js';
import { traceOffline } from '../offline.js';
import {
  ALL_SEEN_MAX, compareFlow, type Disagreement, observeProbe, type ProbeObservation,
  simulatedFlow, type SimulatedFlow,
} from './compare.js';
import { buildLab, type Lab, type LabMode } from './lab.js';
import { isNodeAddress, type LabPlan, type LabTarget, planLab } from './lab-plan.js';
import type { ProbeOutcome } from './prober.js';
import { normaliseHostPort } from './reply.js';

export interface FidelityFlow {
  readonly name: string;
  readonly source: string;
  /** `ip:port` / `[v6]:port`. */
  readonly destination: string;
  /** TCP | UDP | SCTP (any case). */
  readonly protocol: string;
}

export interface FidelityScenario {
  readonly name: string;
  readonly nodeIPs: readonly string[];
  readonly podCIDRs: readonly string[];
  /** The rules to apply per mode (a golden); a mode left out is not run. */
  readonly rules: Partial<Record<LabMode, string>>;
  readonly flows: readonly FidelityFlow[];
  /** Rules loaded into the kernel instead of `rules` (per mode): a deliberate divergence, to
   *  show the comparison catches one. */
  readonly applied?: Partial<Record<LabMode, string>>;
}

export interface FidelitySkip {
  readonly scenario: string;
  readonly mode?: string;
  readonly flow?: string;
  readonly reason: string;
}

export interface FidelityReport {
  disagreements: Disagreement[];
  skipped: FidelitySkip[];
  /** Flows compared (per mode). */
  flows: number;
  probes: number;
  labBuildMs: number;
  /** Round-trip times of the probes that were answered. */
  rtts: { protocol: string; ms: number }[];
}

export interface FidelityOptions {
  /** Namespace prefix of the lab (`kdp-t-xxxxxx` in tests). */
  readonly prefix: string;
  readonly timeoutMs?: number;
  /** Probes for a DNAT flow over more than ALL_SEEN_MAX endpoints (default 24). */
  readonly largeProbes?: number;
}

/** A flow ready to probe: parsed addresses and the simulation per mode. */
export interface PlannedFlow {
  readonly flow: FidelityFlow;
  readonly src: string;
  readonly dst: { readonly ip: string; readonly port: number };
  readonly proto: 'tcp' | 'udp';
  readonly sims: ReadonlyMap<LabMode, SimulatedFlow>;
}

function simulate(s: FidelityScenario, f: FidelityFlow, mode: LabMode,
  rules: string): SimulatedFlow {
  const src = parseHostPort(f.source, 'source').ip;
  const dst = parseHostPort(f.destination, 'destination');
  const proto = f.protocol.toLowerCase() as 'tcp' | 'udp';
  const r = traceOffline({
    rules, mode, nodeIPs: s.nodeIPs, podCIDRs: s.podCIDRs, src, dst: dst.ip, dport: dst.port, proto,
  });
  return simulatedFlow(r, f.destination);
}

/** Simulates every flow the lab can send (TCP, UDP) in every mode; the rest go to `skipped`. */
export function planFlows(s: FidelityScenario, skipped: FidelitySkip[]): PlannedFlow[] {
  const out: PlannedFlow[] = [];
  for (const flow of s.flows) {
    const proto = flow.protocol.toLowerCase();
    if (proto !== 'tcp' && proto !== 'udp') {
      const reason = `${flow.protocol}: Node has no sockets for it`;
      skipped.push({ scenario: s.name, flow: flow.name, reason });
      continue;
    }
    const sims = new Map<LabMode, SimulatedFlow>();
    for (const [mode, rules] of Object.entries(s.rules) as [LabMode, string][]) {
      sims.set(mode, simulate(s, flow, mode, rules));
    }
    const dst = parseHostPort(flow.destination, 'destination');
    out.push({
      flow, proto, sims, src: parseHostPort(flow.source, 'source').ip,
      dst: { ip: dst.ip, port: dst.port ?? 0 },
    });
  }
  return out;
}

function targetsOf(planned: readonly PlannedFlow[]): LabTarget[] {
  const out: LabTarget[] = [];
  for (const p of planned) {
    out.push({ protocol: p.proto, ip: p.dst.ip, port: p.dst.port });
    for (const sim of p.sims.values()) {
      for (const ep of sim.endpoints.keys()) {
        const hp = parseHostPort(ep, 'endpoint');
        out.push({ protocol: p.proto, ip: hp.ip, port: hp.port ?? p.dst.port });
      }
    }
  }
  return out;
}

/** The lab a scenario's planned flows need. */
export function scenarioLabPlan(s: FidelityScenario, planned: readonly PlannedFlow[],
  prefix: string): LabPlan {
  return planLab({
    prefix, nodeIPs: s.nodeIPs, podCIDRs: s.podCIDRs,
    sources: planned.map((p) => p.src), targets: targetsOf(planned),
  });
}

/** Builds the lab, runs every flow in every mode, tears the lab down (also on failure). */
export async function runFidelity(exec: HostExec, s: FidelityScenario,
  opts: FidelityOptions): Promise<FidelityReport> {
  const skipped: FidelitySkip[] = [];
  const planned = planFlows(s, skipped);
  const report: FidelityReport = {
    disagreements: [], skipped, flows: 0, probes: 0, labBuildMs: 0, rtts: [],
  };
  if (planned.length === 0) return report;
  const plan = scenarioLabPlan(s, planned, opts.prefix);
  const t0 = performance.now();
  const lab = await buildLab(exec, plan);
  report.labBuildMs = performance.now() - t0;
  try {
    for (const [mode, rules] of Object.entries(s.rules) as [LabMode, string][]) {
      await lab.applyRules(mode, s.applied?.[mode] ?? rules);
      for (const p of planned) {
        await lab.flushConntrack(p.dst.ip.includes(':') ? 'ipv6' : 'ipv4');
        const obs = await probeFlow(lab, p, p.sims.get(mode)!, opts, report);
        report.flows++;
        const id = { scenario: s.name, mode, flow: p.flow.name };
        report.disagreements.push(...compareFlow(id, p.sims.get(mode)!, obs));
      }
    }
  } finally {
    await lab.close();
  }
  return report;
}

/** How many probes a flow needs: one for a single outcome; DNAT over N ≤ ALL_SEEN_MAX endpoints
 *  until all are seen (at most 20·N: a miss by chance is then ~N·e⁻²⁰); affinity six. */
function probeBudget(sim: SimulatedFlow, large: number): { min: number; max: number } {
  const n = sim.endpoints.size;
  if (sim.verdict !== 'DNAT' || n === 0) return { min: 1, max: 1 };
  if (sim.affinity) return { min: 6, max: 6 };
  if (n <= ALL_SEEN_MAX) return { min: 2 * n, max: 20 * n };
  return { min: large, max: large };
}

async function probeFlow(lab: Lab, p: PlannedFlow, sim: SimulatedFlow, opts: FidelityOptions,
  report: FidelityReport): Promise<ProbeObservation[]> {
  const dst = normaliseHostPort(p.flow.destination) ?? p.flow.destination;
  const ctx = { source: p.src, destination: dst, nodeSource: isNodeAddress(lab.plan, p.src) };
  const timeoutMs = opts.timeoutMs ?? 800;
  const one = async (): Promise<ProbeObservation> => {
    const spec = { protocol: p.proto, source: p.src, destination: p.dst.ip, port: p.dst.port };
    let o: ProbeOutcome = await lab.probe({ ...spec, timeoutMs });
    // A loaded machine can be slow: a timeout the simulation does not expect is retried once
    // with a generous timeout before it counts as a drop.
    if (o.outcome === 'timeout' && sim.verdict !== 'DROP') {
      o = await lab.probe({ ...spec, timeoutMs: timeoutMs * 5 });
    }
    report.probes++;
    if (o.outcome === 'reply') report.rtts.push({ protocol: p.proto, ms: o.rttMs });
    return observeProbe(o, ctx);
  };
  const { min, max } = probeBudget(sim, opts.largeProbes ?? 24);
  const obs: ProbeObservation[] = [await one()];
  // A different verdict is reported as it is: more probes (maybe timeouts) would add nothing.
  if (obs[0]!.verdict !== sim.verdict) return obs;
  const batch = Math.max(1, Math.min(sim.endpoints.size, 8));
  const allSeen = () => [...sim.endpoints.keys()].every((e) => obs.some((o) => o.endpoint === e));
  while (obs.length < max && (obs.length < min || !allSeen())) {
    const n = Math.min(batch, max - obs.length);
    obs.push(...await Promise.all(Array.from({ length: n }, one)));
  }
  return obs;
}
