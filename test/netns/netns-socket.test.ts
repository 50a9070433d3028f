// Sockets made inside a namespace the test creates, used from the test's own process.

import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netnsSockets } from '../../src/host/netns-socket.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const run = promisify(execFile);

describe.runIf(canUseNetns(['ip', 'nsenter']))('netnsSockets', () => {
  const ns = testNetnsName();
  const sockets = netnsSockets();
  beforeAll(() => {
    execFileSync('ip', ['netns', 'add', ns]);
    execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  });
  afterAll(() => {
    sockets.close();
    execFileSync('ip', ['netns', 'delete', ns]);
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
        let out = '';
        for await (const d of s) out += d;
        return out;
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
});
