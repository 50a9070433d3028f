// `kdp verify --netpol --live`: every cell of the computed truth tables probed for real, and
// every disagreement a FIDELITY BUG. Three answers per cell:
// - computed: the evaluator over the API objects (the truth tables `--netpol` prints);
// - traced:   the tracer through each node's applied kdp-netpol table (what kdp says the
//             kernel does), when a tracer is given;
// - observed: a real TCP/UDP probe from the source pod's network namespace.
// Contract: loopback cells are ignored (as upstream's Summary); SCTP is not probed (the
// prober speaks TCP/UDP; `sctpSkipped` can name a better reason, e.g. a kernel without SCTP) and
// says so; a cell observed blocked though computed allowed is probed once more, with
// `retryTimeoutMs` (default twice the timeout), before it counts (a slow machine must not fake a
// bug), as upstream's probes retry. At most `parallel` probes are in flight, across all tables:
// a blocked cell costs its timeout, so the cells of every table wait out their timeouts together.

import type { NetpolTable } from './report.js';
import { TruthTable } from './truth-table.js';

/** What a probe saw: a reply means connected; anything else is blocked. */
export interface CellProbe {
  readonly outcome: 'reply' | 'refused' | 'unreachable' | 'timeout';
  readonly responder?: string;
  readonly error?: string;
}

export interface LiveProbeTarget {
  /** Address and port probed (the pod IP, or a ClusterIP that leads only to it). */
  readonly ip: string;
  readonly port: number;
  /** `pod` or `service ns/name`. */
  readonly via: string;
}

export interface LiveMatrixDeps {
  /** Sends one probe from `from`'s network namespace. */
  probe(from: string, target: LiveProbeTarget, protocol: 'tcp' | 'udp', timeoutMs: number)
    : Promise<CellProbe>;
  /** Where a probe to `to`:port goes (undefined: the pod has no address; not probed). */
  target(to: string, port: number, protocol: 'TCP' | 'UDP'): LiveProbeTarget | undefined;
  /** The tracer's answer through the nodes' tables (optional). */
  traced?(from: string, target: LiveProbeTarget, protocol: 'tcp' | 'udp'): boolean;
  readonly timeoutMs: number;
  /** The second try of a blocked cell computed allowed (default 2 × timeoutMs). */
  readonly retryTimeoutMs?: number;
  readonly parallel: number;
  /** Why SCTP tables are not probed (default: the prober sends TCP and UDP only). */
  readonly sctpSkipped?: string;
  onProbe?(done: number, total: number): void;
}

export interface FidelityBug {
  readonly from: string;
  readonly to: string;
  readonly port: number;
  readonly protocol: string;
  readonly via: string;
  readonly computed: boolean;
  readonly traced?: boolean;
  readonly observed: boolean;
  readonly outcome: string;
  /** `FIDELITY BUG: x/a → y/b TCP/80 (pod 10.244.2.5:80): computed allowed, …`. */
  readonly text: string;
}

export interface LiveTable {
  readonly port: number;
  readonly protocol: string;
  /** Unset when the protocol is not probed (SCTP). */
  readonly skipped?: string;
  readonly observed?: TruthTable;
  readonly probes: number;
  readonly bugs: readonly FidelityBug[];
}

export interface LiveMatrixResult {
  readonly tables: readonly LiveTable[];
  readonly probes: number;
  readonly bugs: number;
  readonly ms: number;
}

const word = (v: boolean): string => (v ? 'allowed' : 'blocked');

/** Runs `jobs` with at most `n` in flight. */
async function bounded<T>(jobs: ReadonlyArray<() => Promise<T>>, n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, jobs.length)) }, worker));
  return out;
}

export async function probeTables(tables: readonly NetpolTable[], d: LiveMatrixDeps)
  : Promise<LiveMatrixResult> {
  const started = Date.now();
  const total = tables.filter((t) => t.protocol !== 'SCTP')
    .reduce((a, t) => a + t.pods.length * (t.pods.length - 1), 0);
  let done = 0;
  const jobs: Array<() => Promise<void>> = [];
  const pending: Array<{ t: NetpolTable; observed?: TruthTable; bugs: FidelityBug[]; probes: number }> = [];
  for (const t of tables) {
    if (t.protocol === 'SCTP') { pending.push({ t, bugs: [], probes: 0 }); continue; }
    const proto = t.protocol.toLowerCase() as 'tcp' | 'udp';
    const entry = { t, observed: new TruthTable(t.pods, t.pods), bugs: [] as FidelityBug[], probes: 0 };
    pending.push(entry);
    t.pods.forEach((from, i) => t.pods.forEach((to, j) => {
      if (i === j) return;
      const target = d.target(to, t.port, t.protocol as 'TCP' | 'UDP');
      if (!target) return;
      const computed = t.values[i]![j]!;
      entry.probes++;
      jobs.push(async () => {
        let p = await d.probe(from, target, proto, d.timeoutMs);
        if (p.outcome !== 'reply' && computed) {
          p = await d.probe(from, target, proto, d.retryTimeoutMs ?? d.timeoutMs * 2);
        }
        d.onProbe?.(++done, total);
        const seen = p.outcome === 'reply';
        entry.observed.set(from, to, seen);
        const traced = d.traced?.(from, target, proto);
        if (seen === computed && (traced === undefined || traced === computed)) return;
        const how = `${p.outcome}${p.responder ? ` from ${p.responder}` : ''}${p.error ? `: ${p.error}` : ''}`;
        entry.bugs.push({ from, to, port: t.port, protocol: t.protocol, via: target.via, computed,
          ...(traced === undefined ? {} : { traced }), observed: seen, outcome: p.outcome,
          text: `FIDELITY BUG: ${from} → ${to} ${t.protocol}/${t.port} (${target.via} ` +
            `${target.ip}:${target.port}): computed ${word(computed)}` +
            `${traced === undefined ? '' : `, traced ${word(traced)}`}, observed ${word(seen)} (${how})` });
      });
    }));
  }
  await bounded(jobs, d.parallel);
  const out: LiveTable[] = pending.map(({ t, observed, bugs, probes }) => {
    if (!observed) {
      return { port: t.port, protocol: t.protocol, probes: 0, bugs: [],
        skipped: d.sctpSkipped ?? 'not probed: the live prober sends TCP and UDP only' };
    }
    bugs.sort((a, b) => (a.from + a.to).localeCompare(b.from + b.to));
    return { port: t.port, protocol: t.protocol, observed, probes, bugs };
  });
  return { tables: out, probes: out.reduce((a, t) => a + t.probes, 0),
    bugs: out.reduce((a, t) => a + t.bugs.length, 0), ms: Date.now() - started };
}

export function renderLiveTables(r: LiveMatrixResult): string {
  const lines: string[] = [];
  for (const t of r.tables) {
    if (t.skipped) { lines.push(`${t.protocol}/${t.port} live: ${t.skipped}`, ''); continue; }
    lines.push(`${t.protocol}/${t.port} observed live (${t.probes} probes):`, t.observed!.prettyPrint());
    for (const b of t.bugs) lines.push(`✗ ${b.text}`);
    lines.push('');
  }
  lines.push(r.bugs === 0
    ? `live: ${r.probes} probes in ${r.ms} ms, every cell as computed`
    : `live: ${r.probes} probes in ${r.ms} ms, ${r.bugs} FIDELITY BUG(s)`);
  return `${lines.join('\n')}\n`;
}
