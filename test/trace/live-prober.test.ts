import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { startProber, toOutcome, type Prober } from '../../src/trace/live/prober.js';
import { normaliseHostPort, parseReplyLine } from '../../src/trace/live/reply.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

describe('live reply lines', () => {
  it('a kdp-echo line without to= gives the responder and the source it saw', () => {
    expect(parseReplyLine('pod=web-1 from=10.244.0.5:41234')).toEqual({
      responder: 'web-1', seenSource: '10.244.0.5:41234',
    });
  });

  it('a prober line with to= gives the served address too, v6 bare or bracketed', () => {
    expect(parseReplyLine('pod=node from=fd00::5:4000 to=[FD00:10:96::20]:80\n')).toEqual({
      responder: 'node', seenSource: '[fd00::5]:4000', servedBy: '[fd00:10:96::20]:80',
    });
  });

  it('an HTTP response wrapping the line is read from its body', () => {
    const http = 'HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\npod=a from=::ffff:1.2.3.4:5\n';
    expect(parseReplyLine(http)).toEqual({ responder: 'a', seenSource: '1.2.3.4:5' });
  });

  it('host:port text without a port is not an address', () => {
    expect(normaliseHostPort('10.0.0.1')).toBeUndefined();
    expect(normaliseHostPort('[::1]:53')).toBe('[::1]:53');
  });

  it('an unknown wire outcome counts as unreachable and keeps its error', () => {
    expect(toOutcome({ outcome: 'error', error: 'EINVAL', rttMs: 2 })).toEqual({
      outcome: 'unreachable', error: 'EINVAL', rttMs: 2,
    });
  });
});

// The prober in the caller's own namespace, on loopback only (no root needed).
describe('live prober on loopback', () => {
  let p: Prober;
  let port = 0;
  beforeAll(async () => {
    p = await startProber('', { name: 'self' });
    // A random free port: another process on the host may hold the first one tried.
    for (let attempt = 0; port === 0; attempt++) {
      const candidate = 20000 + Math.floor(Math.random() * 10000);
      try {
        await p.listen([
          { port: candidate, protocol: 'tcp', address: '127.0.0.1' },
          { port: candidate, protocol: 'udp', address: '127.0.0.1' },
        ]);
        port = candidate;
      } catch (e) {
        if (attempt >= 5) throw e;
      }
    }
  });
  afterAll(async () => p?.close());

  it('a TCP probe is answered with the served address and the source port it used', async () => {
    const o = await p.probe({ protocol: 'tcp', destination: '127.0.0.1', port, sport: port + 1 });
    expect(o).toMatchObject({
      outcome: 'reply', responder: 'self', servedBy: `127.0.0.1:${port}`,
      seenSource: `127.0.0.1:${port + 1}`,
    });
  });

  it('a UDP probe is answered by the address-bound listener', async () => {
    const o = await p.probe({
      protocol: 'udp', source: '127.0.0.1', destination: '127.0.0.1', port,
    });
    expect(o).toMatchObject({ outcome: 'reply', responder: 'self', servedBy: `127.0.0.1:${port}` });
  });

  it('a closed TCP port is refused and a closed UDP port is refused by ICMP', async () => {
    const tcp = await p.probe({ protocol: 'tcp', destination: '127.0.0.1', port: port + 2 });
    const udp = await p.probe({ protocol: 'udp', destination: '127.0.0.1', port: port + 2 });
    expect([tcp.outcome, udp.outcome]).toEqual(['refused', 'refused']);
  });

  it('probes run concurrently and each gets its own answer', async () => {
    const sports = [1, 2, 3, 4, 5, 6].map((i) => port + 10 + i);
    const all = await Promise.all(sports.map((sport) =>
      p.probe({ protocol: 'tcp', destination: '127.0.0.1', port, sport })));
    expect(all.map((o) => o.seenSource)).toEqual(sports.map((s) => `127.0.0.1:${s}`));
  });

  it('listening on a port that is taken fails with KDP_HOST_EXEC', async () => {
    await expect(p.listen([{ port, protocol: 'tcp', address: '127.0.0.1' }]))
      .rejects.toMatchObject({ code: 'KDP_HOST_EXEC' });
  });
});

// The kdp/echo workload of a running cluster answers the prober too (root: kdp-echo binds the
// wildcard, so it runs in a throwaway namespace).
describe.runIf(canUseNetns(['ip']))('live prober against the kdp/echo workload', () => {
  const exec = buildHostExec();
  const ns = testNetnsName();
  afterAll(async () => deleteNetns(exec, ns));

  it('TCP and UDP probes get the echo pod name and the source it saw', async () => {
    await ensureNetns(exec, ns);
    const echo = spawn('ip', ['netns', 'exec', ns, process.execPath,
      fileURLToPath(new URL('../../bin/kdp-echo.js', import.meta.url))], {
      env: { ...process.env, KDP_POD_NAME: 'echo-1', KDP_ECHO_PORTS: '8080/TCP' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const p = await startProber(ns, { name: 'client' });
    try {
      await once(echo.stdout!, 'data');
      const to = { destination: '127.0.0.1', port: 8080 };
      const tcp = await p.probe({ protocol: 'tcp', ...to, sport: 41001 });
      const udp = await p.probe({ protocol: 'udp', ...to, sport: 41002 });
      expect([tcp, udp].map((o) => [o.outcome, o.responder, o.seenSource])).toEqual([
        ['reply', 'echo-1', '127.0.0.1:41001'], ['reply', 'echo-1', '127.0.0.1:41002'],
      ]);
    } finally {
      await p.close();
      echo.kill('SIGTERM');
    }
  });
});
