// Sockets made inside a namespace the test creates, used from the test's own process.

import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netnsSockets } from '../../src/host/netns-socket.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const run = promisify(execFile);

async function readAll(s: Socket): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const d of s) parts.push(d as Buffer);
  return Buffer.concat(parts);
}

/** This process's children that live in network namespace `ns` (the socket helpers). */
function helperPids(ns: string): number[] {
  const want = `net:[${statSync(`/run/netns/${ns}`).ino}]`;
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
    try {
      const ppid = /PPid:\s+(\d+)/.exec(readFileSync(`/proc/${d}/status`, 'utf8'))?.[1];
      return Number(ppid) === process.pid && readlinkSync(`/proc/${d}/ns/net`) === want;
    } catch { return false; }
  }).map(Number);
}

describe.runIf(canUseNetns(['ip', 'nsenter']))('netnsSockets', () => {
  const ns = testNetnsName();
  const peer = testNetnsName();
  const sockets = netnsSockets();
  beforeAll(() => {
    execFileSync('ip', ['netns', 'add', ns]);
    execFileSync('ip', ['netns', 'add', peer]);
    for (const n of [ns, peer]) execFileSync('ip', ['-n', n, 'link', 'set', 'lo', 'up']);
    // A veth between the two namespaces: 10.250.0.1 in ns, 10.250.0.2 in peer (only theirs).
    execFileSync('ip', ['-n', ns, 'link', 'add', 'kdp-a', 'type', 'veth', 'peer', 'name', 'kdp-b', 'netns', peer]);
    execFileSync('ip', ['-n', ns, 'addr', 'add', '10.250.0.1/24', 'dev', 'kdp-a']);
    execFileSync('ip', ['-n', peer, 'addr', 'add', '10.250.0.2/24', 'dev', 'kdp-b']);
    execFileSync('ip', ['-n', ns, 'link', 'set', 'kdp-a', 'up']);
    execFileSync('ip', ['-n', peer, 'link', 'set', 'kdp-b', 'up']);
  });
  afterAll(() => {
    sockets.close();
    execFileSync('ip', ['netns', 'delete', ns]);
    execFileSync('ip', ['netns', 'delete', peer]);
  });

  it('connects to a server that exists only inside the namespace', async () => {
    const server = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e',
      `require('node:net').createServer((s) => s.on('data', (d) => s.end('echo:' + d))).listen(7001, '127.0.0.1', () => console.log('up'))`],
    { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((r) => server.stdout!.once('data', r));
      const answers = await Promise.all([1, 2, 3].map(async (i) => {
        const s = await sockets.connect(ns, '127.0.0.1', 7001);
        s.end(`hi${i}`);
        return (await readAll(s)).toString();
      }));
      expect(answers).toEqual(['echo:hi1', 'echo:hi2', 'echo:hi3']);
      // Nothing listens on 127.0.0.1:7002 inside the namespace (the host's is not reached).
      await expect(sockets.connect(ns, '127.0.0.1', 7002)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      server.kill();
    }
  });

  it('listens on an address of the namespace; its clients reach this process', async () => {
    const srv = await sockets.listen(ns, '127.0.0.1', 7003);
    srv.on('connection', (s) => s.end('from the host process'));
    try {
      // Asynchronously: this process must stay free to accept the client.
      const { stdout } = await run('ip', ['netns', 'exec', ns, process.execPath, '-e',
        `const s = require('node:net').connect(7003, '127.0.0.1'); let o = ''; s.on('data', (d) => o += d); s.on('end', () => console.log(o));`],
      { encoding: 'utf8', timeout: 10_000 });
      expect(stdout.trim()).toBe('from the host process');
    } finally {
      srv.close();
    }
  });

  it('listens on a veth address and is reached from another namespace, both ends made by helpers', async () => {
    const srv = await sockets.listen(ns, '10.250.0.1', 7004);
    const seen: string[] = [];
    srv.on('connection', (s) => {
      seen.push(`${s.remoteAddress}`);
      s.on('data', (d) => s.end(`got ${d}`));
    });
    try {
      const c = await sockets.connect(peer, '10.250.0.1', 7004);
      c.end('ping');
      expect((await readAll(c)).toString()).toBe('got ping');
      expect(seen).toEqual(['10.250.0.2']);
      // The address exists only in ns: from the peer's loopback nothing listens there.
      await expect(sockets.connect(peer, '127.0.0.1', 7004)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      // A port already taken inside the namespace is refused as by listen(2).
      await expect(sockets.listen(ns, '10.250.0.1', 7004)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      srv.close();
    }
  });

  it('carries bulk data intact and many connections through one helper (sanity, not a benchmark)', async () => {
    const srv = await sockets.listen(ns, '127.0.0.1', 7005);
    // Echo server in this process, sockets bound inside ns.
    srv.on('connection', (s) => s.pipe(s));
    try {
      const payload = randomBytes(16 * 1024 * 1024);
      const c = await sockets.connect(ns, '127.0.0.1', 7005);
      const back = readAll(c);
      c.end(payload);
      const got = await back;
      expect(got.length).toBe(payload.length);
      expect(createHash('sha256').update(got).digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
      for (let i = 0; i < 200; i++) {
        const s = await sockets.connect(ns, '127.0.0.1', 7005);
        s.end(`n${i}`);
        expect((await readAll(s)).toString()).toBe(`n${i}`);
      }
      await Promise.all(Array.from({ length: 50 }, async (_, i) => {
        const s = await sockets.connect(ns, '127.0.0.1', 7005);
        s.end(`p${i}`);
        expect((await readAll(s)).toString()).toBe(`p${i}`);
      }));
      // One helper per namespace, reused for all of them.
      expect(helperPids(ns)).toHaveLength(1);
    } finally {
      srv.close();
    }
  }, 60_000);

  it('lets an idle helper go and starts a new one for the next request', async () => {
    const idle = netnsSockets({ idleMs: 200 });
    const srv = await sockets.listen(peer, '127.0.0.1', 7006);
    srv.on('connection', (s) => s.end('ok'));
    try {
      const before = helperPids(peer);
      const s1 = await idle.connect(peer, '127.0.0.1', 7006);
      expect((await readAll(s1)).toString()).toBe('ok');
      const during = helperPids(peer);
      expect(during.length).toBe(before.length + 1);
      const mine = during.find((p) => !before.includes(p))!;
      await new Promise((r) => setTimeout(r, 1000));
      expect(helperPids(peer)).not.toContain(mine);
      const s2 = await idle.connect(peer, '127.0.0.1', 7006);
      expect((await readAll(s2)).toString()).toBe('ok');
    } finally {
      srv.close();
      idle.close();
    }
  });

  it('rejects a request for a namespace that does not exist, naming it', async () => {
    const missing = `kdp-t-none${randomBytes(2).toString('hex')}`;
    await expect(sockets.connect(missing, '127.0.0.1', 80)).rejects.toMatchObject({
      code: 'KDP_HOST_EXEC', message: expect.stringContaining(missing) });
  });
});
