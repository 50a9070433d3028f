// `kdp verify --live --sample N`: which probes to send for real. N random pod pairs and N random
// (pod, Service ClusterIP port) checks, drawn with a seeded generator so a run can be repeated.
// Only Services that select pods are drawn (the API service's endpoint is not a pod).

import type { Pod, Service } from '../../api/types.js';
import { seededRng } from '../../scheduler/rng.js';
import type { ResolvedDestination, ResolvedSource } from '../cluster.js';
import type { Topology, TracePodInfo } from '../topology.js';

export interface LiveCase {
  readonly kind: 'pod' | 'service';
  readonly src: ResolvedSource;
  readonly dst: ResolvedDestination;
  readonly proto: 'tcp' | 'udp';
}

/** The same seed gives the same draws (mulberry32, shared with the scheduler's tie-breaks). */
export const seededRandom: (seed: number) => () => number = seededRng;

function podSource(p: TracePodInfo): ResolvedSource {
  return { ip: p.ip, entry: { kind: 'pod', pod: p.name, node: p.node }, label: `pod ${p.name}` };
}

/** The pod's first TCP container port (kdp/echo listens there), else 8080. */
function podPort(pods: readonly Pod[], name: string): number {
  const pod = pods.find((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}` === name);
  const ports = (pod?.spec?.containers ?? []).flatMap((c) => c.ports ?? []);
  return ports.find((p) => (p.protocol ?? 'TCP') === 'TCP')?.containerPort ?? 8080;
}

export function sampleLiveCases(o: {
  topo: Topology; pods: readonly Pod[]; services: readonly Service[]; n: number; seed: number;
}): LiveCase[] {
  const rnd = seededRandom(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const out: LiveCase[] = [];
  const pods = o.topo.pods;
  if (pods.length >= 2) {
    for (let i = 0; i < o.n; i++) {
      const a = pick(pods);
      // Another pod, at its address of a's family (a dual-stack pod is listed once per IP).
      const others = pods.filter((p) => p.name !== a.name && p.ip.includes(':') === a.ip.includes(':'));
      if (others.length === 0) continue;
      const b = pick(others);
      out.push({
        kind: 'pod', src: podSource(a), proto: 'tcp',
        dst: { ip: b.ip, port: podPort(o.pods, b.name), label: `pod ${b.name}`, pod: b.name },
      });
    }
  }
  const targets = o.services.flatMap((s) => {
    const ip = s.spec?.clusterIP;
    const selects = Object.keys(s.spec?.selector ?? {}).length > 0;
    if (!ip || ip === 'None' || !selects) return [];
    return (s.spec?.ports ?? [])
      .filter((p) => (p.protocol ?? 'TCP') !== 'SCTP')
      .map((p) => ({ s, p, ip }));
  });
  if (targets.length > 0 && pods.length > 0) {
    for (let i = 0; i < o.n; i++) {
      const { s, p, ip } = pick(targets);
      const name = `${s.metadata.namespace ?? 'default'}/${s.metadata.name}`;
      const family = pods.filter((x) => x.ip.includes(':') === ip.includes(':'));
      if (family.length === 0) continue;
      out.push({
        kind: 'service', src: podSource(pick(family)),
        proto: (p.protocol ?? 'TCP') === 'UDP' ? 'udp' : 'tcp',
        dst: { ip, port: p.port, label: `service ${name}:${p.name || p.port}` },
      });
    }
  }
  return out;
}
