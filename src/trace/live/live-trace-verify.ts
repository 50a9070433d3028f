// `kdp verify --live`: sampled probes sent for real next to the simulated checks. Each probe is a
// case of its check (pod → pod, or pod → Service ClusterIP); every fidelity bug it shows is a
// failure of that check.

import type { Pod, Service } from '../../api/types.js';
import type { VerifyCheck } from '../verify.js';
import { liveTrace, type LiveCluster, type LiveTrace } from './live-trace.js';
import { sampleLiveCases, type LiveCase } from './live-trace-sample.js';

export interface LiveVerifyInput {
  readonly pods: readonly Pod[];
  readonly services: readonly Service[];
  /** Pod pairs to probe, and as many Service checks. */
  readonly n: number;
  readonly seed: number;
  /** Told before each probe (for a progress line). */
  readonly onProbe?: (i: number, total: number, c: LiveCase) => void;
}

export interface LiveVerifyResult {
  readonly checks: VerifyCheck[];
  readonly traces: LiveTrace[];
}

export async function verifyLive(cluster: LiveCluster, o: LiveVerifyInput): Promise<LiveVerifyResult> {
  const cases = sampleLiveCases({
    topo: cluster.topo, pods: o.pods, services: o.services, n: o.n, seed: o.seed,
  });
  const sample = `sample of ${o.n}, seed ${o.seed}`;
  const checks: Record<LiveCase['kind'], VerifyCheck> = {
    pod: {
      name: `live: pod → pod, the kernel agrees with the simulation (${sample})`, cases: 0, failures: [],
    },
    service: {
      name: `live: pod → Service ClusterIP, the kernel agrees with the simulation (${sample})`,
      cases: 0, failures: [],
    },
  };
  const traces: LiveTrace[] = [];
  for (const [i, c] of cases.entries()) {
    o.onProbe?.(i, cases.length, c);
    const t = await liveTrace(cluster, { src: c.src, dst: c.dst, proto: c.proto });
    traces.push(t);
    const check = checks[c.kind];
    check.cases++;
    for (const b of t.comparison.bugs) {
      check.failures.push({
        what: `${c.src.label} → ${c.dst.label} (${b.aspect}${b.where ? ` at ${b.where}` : ''}; ` +
          `files ${t.dir})`,
        expected: `simulated ${b.simulated}`, got: `observed ${b.observed}`,
      });
    }
  }
  return { checks: Object.values(checks).filter((c) => c.cases > 0), traces };
}
