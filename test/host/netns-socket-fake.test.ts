// fakeNetnsSockets: the same contract on loopback, namespace ignored (no root needed).

import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fakeNetnsSockets } from '../../src/host/netns-socket.js';

describe('fakeNetnsSockets', () => {
  it('listens and connects on loopback whatever the namespace, and keeps connect errors', async () => {
    const sockets = fakeNetnsSockets();
    const srv = await sockets.listen('any-ns', '127.0.0.1', 0);
    srv.on('connection', (s) => s.end('hello'));
    const port = (srv.address() as AddressInfo).port;
    try {
      const c = await sockets.connect('other-ns', '127.0.0.1', port);
      let text = '';
      for await (const d of c) text += d;
      expect(text).toBe('hello');
    } finally {
      srv.close();
    }
    await new Promise((r) => srv.once('close', r));
    await expect(sockets.connect('x', '127.0.0.1', port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    sockets.close();
  });
});
