import { describe, expect, it } from 'vitest';
import { probeTables, renderLiveTables, type CellProbe } from '../../src/netpol/live-matrix.js';
import type { NetpolTable } from '../../src/netpol/report.js';
import { sctpSkipReason } from '../../src/cli/commands/verify-netpol-live.js';

const pods = ['x/a', 'x/b', 'y/a'];
const table = (protocol: 'TCP' | 'UDP' | 'SCTP', values: boolean[][]): NetpolTable =>
  ({ port: 80, protocol, classes: 1, evaluations: 1, pods, values, text: '' });
// x/b is denied ingress from everyone.
const computed = [[true, false, true], [true, true, true], [true, false, true]];

function deps(observe: (from: string, to: string, attempt: number) => CellProbe['outcome'],
  traced?: (from: string, to: string) => boolean) {
  const calls: string[] = [];
  const attempts = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    calls,
    maxInFlight: () => maxInFlight,
    deps: {
      timeoutMs: 50, parallel: 2,
      target: (to: string, port: number) => ({ ip: `ip-of-${to}`, port, via: 'pod' }),
      async probe(from: string, t: { ip: string }, _p: string, timeoutMs: number) {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        const to = t.ip.slice('ip-of-'.length);
        const k = `${from}>${to}`;
        const n = (attempts.get(k) ?? 0) + 1;
        attempts.set(k, n);
        calls.push(`${k}@${timeoutMs}`);
        return { outcome: observe(from, to, n) };
      },
      ...(traced ? { traced: (from: string, t: { ip: string }) => traced(from, t.ip.slice(6)) } : {}),
    },
  };
}

describe('kdp verify --netpol --live (probe orchestration)', () => {
  it('probes every non-loopback cell with bounded parallelism; agreement is no bug', async () => {
    const d = deps((_f, to) => (to === 'x/b' ? 'timeout' : 'reply'));
    const r = await probeTables([table('TCP', computed)], d.deps);
    expect(r.probes).toBe(6);
    expect(r.bugs).toBe(0);
    expect(d.maxInFlight()).toBeLessThanOrEqual(2);
    expect(r.tables[0]!.observed!.prettyPrint()).toBe(
      '-\tx/a\tx/b\ty/a\nx/a\t?\tX\t.\nx/b\t.\t?\t.\ny/a\t.\tX\t?');
    expect(renderLiveTables(r)).toContain('6 probes');
  });

  it('every disagreement is a FIDELITY BUG; a blocked cell computed allowed is retried once with twice the timeout', async () => {
    // y/a → x/a times out for real (a bug); x/a → y/a only on the first try (no bug);
    // y/a → x/b answers though denied (a bug).
    const d = deps((f, to, n) => {
      if (f === 'y/a' && to === 'x/a') return 'timeout';
      if (f === 'x/a' && to === 'y/a') return n === 1 ? 'timeout' : 'reply';
      return to === 'x/b' && f === 'x/a' ? 'timeout' : 'reply';
    });
    const r = await probeTables([table('TCP', computed)], d.deps);
    expect(r.bugs).toBe(2);
    expect(r.tables[0]!.bugs.map((b) => b.text)).toEqual([
      'FIDELITY BUG: y/a → x/a TCP/80 (pod ip-of-x/a:80): computed allowed, observed blocked (timeout)',
      'FIDELITY BUG: y/a → x/b TCP/80 (pod ip-of-x/b:80): computed blocked, observed allowed (reply)',
    ]);
    expect(d.calls.filter((c) => c.startsWith('x/a>y/a'))).toEqual(['x/a>y/a@50', 'x/a>y/a@100']);
    expect(d.calls.filter((c) => c.startsWith('x/a>x/b'))).toEqual(['x/a>x/b@50']);
  });

  it('the tracer disagreeing with the evaluator is a bug too, even when the kernel agrees', async () => {
    const d = deps((_f, to) => (to === 'x/b' ? 'timeout' : 'reply'), (f, to) => to !== 'x/b' && !(f === 'x/a' && to === 'y/a'));
    const r = await probeTables([table('UDP', computed)], d.deps);
    expect(r.tables[0]!.bugs.map((b) => b.text)).toEqual([
      'FIDELITY BUG: x/a → y/a UDP/80 (pod ip-of-y/a:80): computed allowed, traced blocked, observed allowed (reply)',
    ]);
  });

  it('SCTP is not probed, and says so', async () => {
    const d = deps(() => 'reply');
    const r = await probeTables([table('SCTP', computed)], d.deps);
    expect(r.probes).toBe(0);
    expect(r.tables[0]!.skipped).toMatch(/TCP and UDP only/);
    expect(d.calls).toEqual([]);
  });

  it('the cells of all tables are in flight together, and the second try uses retryTimeoutMs', async () => {
    const d = deps((f, to, n) => (f === 'x/a' && to === 'y/a' && n === 1 ? 'timeout' : to === 'x/b' ? 'timeout' : 'reply'));
    const r = await probeTables([table('TCP', computed), table('UDP', computed)],
      { ...d.deps, parallel: 64, retryTimeoutMs: 500 });
    expect(r.probes).toBe(12);
    expect(d.maxInFlight()).toBe(12);
    expect(d.calls.filter((c) => c.startsWith('x/a>y/a'))).toEqual(['x/a>y/a@50', 'x/a>y/a@50', 'x/a>y/a@500']);
    expect(r.bugs).toBe(0);
  });

  it('SCTP skipped for the reason the caller names: a kernel without SCTP', async () => {
    const d = deps(() => 'reply');
    const r = await probeTables([table('SCTP', computed)], { ...d.deps, sctpSkipped: sctpSkipReason(new Set(['TCP', 'UDP'])) });
    expect(r.tables[0]!.skipped).toBe('not probed: this kernel has no SCTP (not in /proc/net/protocols), so no pod can serve it');
    expect(sctpSkipReason(new Set(['TCP', 'UDP', 'SCTP']))).toMatch(/TCP and UDP only/);
  });
});
