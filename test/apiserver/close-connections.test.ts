// Closing the API server ends every connection at once: one stuck before its TLS handshake and
// an open watch; close() does not wait for the handshake timeout (32 s by default).

import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { issueCa, issueLeaf } from '../../src/apiserver/pki/index.js';
import { listenApiServer } from '../../src/apiserver/serve.js';
import { buildMemoryStore } from '../../src/store/index.js';

describe('API server close', () => {
  it('ends half-open and watching connections without waiting for their timeouts', async () => {
    const ca = await issueCa('kdp-test-ca');
    const leaf = await issueLeaf(ca, { commonName: 'kdp', usage: 'server', sans: ['IP:127.0.0.1'] });
    const store = buildMemoryStore();
    // Timeouts far beyond the test's own: a close() that waited for them fails the test by time-out.
    const srv = await listenApiServer({ store, headersTimeoutMs: 600_000, requestTimeoutMs: 600_000,
      keepAliveTimeoutMs: 600_000 },
    { port: 0, tls: { certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: ca.certPem } });
    const closed: string[] = [];
    // 1. TCP only: no ClientHello ever.
    const raw = netConnect(srv.port, '127.0.0.1');
    raw.on('error', () => {});
    raw.on('close', () => closed.push('handshake'));
    await new Promise((r) => raw.once('connect', r));
    // 2. A watch over TLS, left open.
    const watch = tlsConnect({ port: srv.port, host: '127.0.0.1', ca: ca.certPem, servername: 'localhost',
      checkServerIdentity: () => undefined });
    watch.on('error', () => {});
    watch.on('close', () => closed.push('watch'));
    await new Promise((r) => watch.once('secureConnect', r));
    watch.write('GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => watch.once('data', r));
    await srv.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(closed.sort()).toEqual(['handshake', 'watch']);
    await store.close();
  }, 15_000);
});
