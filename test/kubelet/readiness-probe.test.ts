import { createServer as createHttp } from 'node:http';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Probe } from '../../src/api/types.js';
import { buildHelperProber, type Prober, type ProbeRequest } from '../../src/kubelet/prober.js';
import { probeRequest, startReadinessWorker } from '../../src/kubelet/readiness.js';
import { waitFor } from '../helpers/cluster.js';

/** A prober answering from a script of results (then failing), recording what it was asked. */
function scriptedProber(results: boolean[]): Prober & { asked: ProbeRequest[] } {
  const asked: ProbeRequest[] = [];
  return {
    asked,
    async probe(req) { asked.push(req); return { ok: results.shift() ?? false }; },
    async close() {},
  };
}

const container = { name: 'web', ports: [{ name: 'http', containerPort: 8080 }] };

describe('readiness probe requests', () => {
  it('resolve named ports and default the host to the pod IP', () => {
    expect(probeRequest({ httpGet: { port: 'http', path: '/h' }, timeoutSeconds: 2 }, container, '10.0.0.5'))
      .toEqual({ kind: 'http', host: '10.0.0.5', port: 8080, timeoutMs: 2000, path: '/h', scheme: 'HTTP', headers: [] });
    expect(probeRequest({ tcpSocket: { port: 81 } }, container, '10.0.0.5'))
      .toEqual({ kind: 'tcp', host: '10.0.0.5', port: 81, timeoutMs: 1000 });
    expect(probeRequest({ tcpSocket: { port: 'nope' } }, container, '10.0.0.5')).toBeUndefined();
  });
});

describe('readiness worker', () => {
  const run = (probe: Probe, results: boolean[]) => {
    const prober = scriptedProber(results);
    const flips: boolean[] = [];
    const w = startReadinessWorker({
      probe, container, podIP: () => '10.0.0.5', prober, timeScale: 0.001, onChange: (r) => flips.push(r),
    });
    return { w, flips, prober };
  };

  it('turns ready after successThreshold successes and unready after failureThreshold failures', async () => {
    const { w, flips } = run({ tcpSocket: { port: 8080 }, periodSeconds: 1, successThreshold: 2, failureThreshold: 3 },
      [false, true, true, false, false, true, false, false, false]);
    await waitFor(() => flips.length === 2, 5000, 'two flips');
    w.stop();
    expect(flips).toEqual([true, false]);
    expect(w.ready).toBe(false);
  });

  it('a trigger while a probe is in flight probes again once it ends (not a period later)', async () => {
    const answers: Array<(ok: boolean) => void> = [];
    const prober: Prober = {
      probe: () => new Promise((r) => answers.push((ok) => r({ ok }))),
      async close() {},
    };
    const flips: boolean[] = [];
    const w = startReadinessWorker({
      probe: { tcpSocket: { port: 8080 }, periodSeconds: 3600 }, container, podIP: () => '10.0.0.5',
      prober, onChange: (r) => flips.push(r),
    });
    expect(answers).toHaveLength(1); // the first probe, at start: the workload is not listening yet
    w.trigger(); // the workload says it listens now
    answers[0]!(false);
    await waitFor(() => answers.length === 2 || undefined, 2000, 'a second probe');
    answers[1]!(true);
    await waitFor(() => flips.length === 1 || undefined, 2000, 'ready');
    w.stop();
    expect(flips).toEqual([true]);
  });

  it('does not probe before initialDelaySeconds', async () => {
    const { w, flips, prober } = run({ tcpSocket: { port: 8080 }, periodSeconds: 1, initialDelaySeconds: 100 }, [true]);
    await new Promise((r) => setTimeout(r, 30));
    expect(prober.asked.length).toBe(0);
    await waitFor(() => flips[0] === true, 5000, 'ready after the delay');
    w.stop();
  });
});

describe('helper prober (bin/kdp-kubelet-prober.js, in this namespace)', () => {
  let tcp: Server;
  let http: ReturnType<typeof createHttp>;
  let prober: Prober;
  const port = (s: { address(): unknown }) => (s.address() as AddressInfo).port;

  beforeAll(async () => {
    tcp = createServer((s) => s.end());
    http = createHttp((req, res) => { res.statusCode = req.url === '/ok' ? 200 : 503; res.end(); });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    prober = buildHelperProber();
  });
  afterAll(async () => {
    await prober.close();
    tcp.close();
    http.close();
  });

  it('answers tcpSocket probes: connect succeeds, refused fails', async () => {
    expect((await prober.probe({ kind: 'tcp', host: '127.0.0.1', port: port(tcp), timeoutMs: 1000 })).ok).toBe(true);
    const closed = port(tcp);
    await new Promise((r) => tcp.close(r));
    const r = await prober.probe({ kind: 'tcp', host: '127.0.0.1', port: closed, timeoutMs: 1000 });
    expect(r).toMatchObject({ ok: false, message: expect.stringContaining('ECONNREFUSED') });
  });

  it('answers httpGet probes by status code, many at once over one helper', async () => {
    const reqs = Array.from({ length: 20 }, (_, i) => prober.probe({
      kind: 'http', host: '127.0.0.1', port: port(http), path: i % 2 ? '/ok' : '/bad', timeoutMs: 1000,
    }));
    const out = await Promise.all(reqs);
    expect(out.map((o) => o.ok)).toEqual(Array.from({ length: 20 }, (_, i) => i % 2 === 1));
    expect(out[0]!.message).toContain('503');
  });
});
