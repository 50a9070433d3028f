// The native and JS echo workloads keep one contract: the same answer line for TCP, UDP and
// HTTP, the same health switch, the same `ready` line. Loopback only.

import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsEchoCommand, resolveEchoCommand, type EchoCommand } from '../../src/kubelet/echo-command.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-echo-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function start(cmd: EchoCommand, port: number, extra: Record<string, string> = {}): Promise<string> {
  const c = spawn(cmd.file, [...cmd.args], {
    env: { KDP_POD_NAME: 'web-1', KDP_ECHO_PORTS: `${port}/TCP,${port}/UDP`, ...extra },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(c);
  let text = '';
  output.set(port, () => text);
  return new Promise((resolve, reject) => {
    c.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) resolve(text.split('\n')[0]!);
    });
    c.once('exit', (code) => reject(new Error(`echo exited ${code}`)));
  });
}

/** Everything an echo started on `port` has printed so far. */
const output = new Map<number, () => string>();

function tcp(port: number, data: string): Promise<{ text: string; local: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    let local = '';
    const s = connect(port, '127.0.0.1', () => {
      local = `${s.localAddress}:${s.localPort}`;
      s.write(data);
    });
    s.on('data', (d) => { text += d; });
    s.on('close', () => resolve({ text, local }));
    s.on('error', reject);
  });
}

function udp(port: number): Promise<{ text: string; local: string }> {
  return new Promise((resolve) => {
    const u = createSocket('udp4');
    u.on('message', (m) => {
      const a = u.address();
      u.close();
      resolve({ text: String(m), local: `${a.address}:${a.port}` });
    });
    u.bind(0, '127.0.0.1', () => u.send('x', port, '127.0.0.1'));
  });
}

describe('the kdp/echo workload', () => {
  const variants: Array<[string, () => Promise<EchoCommand>]> = [
    ['native build', async () => resolveEchoCommand(join(dir, 'bin'))],
    ['JS fallback', async () => jsEchoCommand()],
  ];
  for (const [name, make] of variants) {
    it(`${name}: answers TCP, UDP and HTTP with the pod name, the source it saw and the address it was reached at`, async () => {
      const cmd = await make();
      if (name === 'native build') expect(cmd.native, cmd.reason).toBe(true);
      const port = await freePort();
      expect(await start(cmd, port)).toBe(`ready pod=web-1 ports=${port}`);
      const t = await tcp(port, 'hello');
      expect(t.text).toBe(`pod=web-1 from=${t.local} to=127.0.0.1:${port}\n`);
      const u = await udp(port);
      expect(u.text).toBe(`pod=web-1 from=${u.local} to=127.0.0.1:${port}\n`);
      const h = await tcp(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      const body = `pod=web-1 from=${h.local} to=127.0.0.1:${port}\n`;
      expect(h.text).toBe(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n` +
        `Connection: close\r\n\r\n${body}`);
      await tcp(port, 'GET /a\x01b HTTP/1.1\r\n\r\n');
      // One log line per request answered, so `kubectl logs -f` shows traffic.
      for (let i = 0; i < 50 && output.get(port)!().split('\n').length < 6; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(output.get(port)!().split('\n').slice(1)).toEqual([
        `tcp from=${t.local} to=127.0.0.1:${port}`,
        `udp from=${u.local} to=127.0.0.1:${port}`,
        `http from=${h.local} to=127.0.0.1:${port} GET /`,
        expect.stringMatching(new RegExp(`^http from=127\\.0\\.0\\.1:\\d+ to=127\\.0\\.0\\.1:${port} GET /a\\?b$`)),
        '',
      ]);
    });

    it(`${name}: /kdp/fail and /kdp/recover switch the health endpoint between 503 and 200`, async () => {
      const port = await freePort();
      await start(await make(), port);
      expect((await tcp(port, 'GET /kdp/healthz HTTP/1.1\r\n\r\n')).text).toMatch(/^HTTP\/1.1 200 OK/);
      await tcp(port, 'GET /kdp/fail HTTP/1.1\r\n\r\n');
      expect((await tcp(port, 'GET /kdp/healthz HTTP/1.1\r\n\r\n')).text).toMatch(/^HTTP\/1.1 503 /);
      await tcp(port, 'GET /kdp/recover HTTP/1.1\r\n\r\n');
      expect((await tcp(port, 'GET /kdp/healthz HTTP/1.1\r\n\r\n')).text).toMatch(/^HTTP\/1.1 200 OK/);
    });

    it(`${name}: exits with KDP_ECHO_EXIT_CODE after KDP_ECHO_EXIT_AFTER_MS`, async () => {
      const cmd = await make();
      const port = await freePort();
      const c = spawn(cmd.file, [...cmd.args], {
        env: { KDP_ECHO_PORTS: `${port}/TCP`, KDP_ECHO_EXIT_AFTER_MS: '200', KDP_ECHO_EXIT_CODE: '3' },
        stdio: 'ignore',
      });
      children.push(c);
      expect(await new Promise((r) => c.once('exit', r))).toBe(3);
    });
  }

  it('falls back to the JS echo, with the reason, when no compiler works', async () => {
    const cmd = await resolveEchoCommand(join(dir, 'other'), ['/nonexistent/cc']);
    expect(cmd.native).toBe(false);
    expect(cmd.reason).toMatch(/no working C compiler/);
  });
});
