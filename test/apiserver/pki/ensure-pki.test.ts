import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenFile } from '../../../src/apiserver/authn/token-file.js';
import {
  caOf, ensurePki, issueClientCertificate, type Pki,
} from '../../../src/apiserver/pki/index.js';
import { isKdpError } from '../../../src/errors.js';

let dataDir: string;
let pki: Pki;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'kdp-pki-'));
  pki = await ensurePki(dataDir);
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

interface Seen { authorized: boolean; subject?: Record<string, unknown>; error?: string }

/** A TLS server with the PKI's serving cert; resolves with what it saw of the client. */
async function handshake(p: Pki, client: tls.ConnectionOptions): Promise<Seen> {
  let seenResolve!: (s: Seen) => void;
  const seen = new Promise<Seen>((r) => (seenResolve = r));
  const server = tls.createServer(
    { cert: p.serverCertPem, key: p.serverKeyPem, ca: p.caCertPem, requestCert: true,
      rejectUnauthorized: false },
    (sock) => {
      const cert = sock.getPeerCertificate();
      seenResolve({ authorized: sock.authorized, subject: cert.subject as never });
      sock.end('ok');
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    const clientResult = await new Promise<string | undefined>((resolve) => {
      const c = tls.connect({ host: '127.0.0.1', port, ...client }, () => c.end());
      c.on('error', (e) => resolve(e.message));
      c.on('close', () => resolve(undefined));
      c.resume();
    });
    if (clientResult !== undefined) return { authorized: false, error: clientResult };
    return await seen;
  } finally {
    server.close();
  }
}

describe('ensurePki', () => {
  it('writes every file under <dataDir>/pki with mode 0600', async () => {
    expect(pki.dir).toBe(join(dataDir, 'pki'));
    for (const f of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'admin.crt',
      'admin.key', 'tokens.csv']) {
      const st = await stat(join(pki.dir, f));
      expect(st.mode & 0o777, f).toBe(0o600);
    }
  });

  it('makes a CA and a serving certificate for 127.0.0.1, localhost and kubernetes.default',
    () => {
    const ca = new X509Certificate(pki.caCertPem);
    const server = new X509Certificate(pki.serverCertPem);
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(server.subjectAltName).toContain('DNS:localhost');
    expect(server.subjectAltName).toContain('DNS:kubernetes.default.svc.cluster.local');
    expect(server.keyUsage).toContain('1.3.6.1.5.5.7.3.1');
  });

  it('makes an admin client certificate CN=kubernetes-admin O=system:masters', () => {
    const admin = new X509Certificate(pki.adminCertPem);
    expect(admin.subject.split('\n')).toEqual(['CN=kubernetes-admin', 'O=system:masters']);
    expect(admin.keyUsage).toContain('1.3.6.1.5.5.7.3.2');
  });

  it('writes the admin token in the upstream token-file CSV format', async () => {
    const text = await readFile(pki.tokenFile, 'utf8');
    expect(text).toBe(`${pki.adminToken},kubernetes-admin,kubernetes-admin,"system:masters"\n`);
    const [entry] = parseTokenFile(text, pki.tokenFile);
    expect(entry?.user).toEqual({ name: 'kubernetes-admin', uid: 'kubernetes-admin',
      groups: ['system:masters'] });
  });

  it('reloads the same material when called again', async () => {
    const again = await ensurePki(dataDir);
    expect(again).toEqual(pki);
  });

  it('reissues only the serving certificate when an extra SAN is asked for', async () => {
    const dir2 = await mkdtemp(join(tmpdir(), 'kdp-pki-'));
    try {
      const first = await ensurePki(dir2);
      const second = await ensurePki(dir2, { extraSANs: ['IP:10.96.0.1', 'DNS:kdp.local'] });
      expect(second.caCertPem).toBe(first.caCertPem);
      expect(second.adminCertPem).toBe(first.adminCertPem);
      expect(second.adminToken).toBe(first.adminToken);
      expect(second.serverCertPem).not.toBe(first.serverCertPem);
      const san = new X509Certificate(second.serverCertPem).subjectAltName;
      expect(san).toContain('IP Address:10.96.0.1');
      expect(san).toContain('DNS:kdp.local');
      expect(san).toContain('IP Address:127.0.0.1');
    } finally {
      await rm(dir2, { recursive: true, force: true });
    }
  });

  it('refuses to replace a CA certificate whose key is missing', async () => {
    const dir3 = await mkdtemp(join(tmpdir(), 'kdp-pki-'));
    try {
      await ensurePki(dir3);
      await rm(join(dir3, 'pki', 'ca.key'));
      const err = await ensurePki(dir3).catch((e: unknown) => e);
      expect(isKdpError(err, 'KDP_CONFIG')).toBe(true);
      expect((err as Error).message).toContain('ca.key');
    } finally {
      await rm(dir3, { recursive: true, force: true });
    }
  });

  it('keeps other lines of an existing token file and appends the admin token', async () => {
    const dir4 = await mkdtemp(join(tmpdir(), 'kdp-pki-'));
    try {
      await ensurePki(dir4);
      const tokenFile = join(dir4, 'pki', 'tokens.csv');
      await writeFile(tokenFile, 'abc,jane,u1,"dev,ops"');
      const p = await ensurePki(dir4);
      const entries = parseTokenFile(await readFile(tokenFile, 'utf8'), tokenFile);
      expect(entries.map((e) => e.user.name)).toEqual(['jane', 'kubernetes-admin']);
      expect(entries[1]?.token).toBe(p.adminToken);
    } finally {
      await rm(dir4, { recursive: true, force: true });
    }
  });
});

describe('TLS with the generated PKI', () => {
  it('a client trusting the CA with the admin certificate connects and is seen as admin',
    async () => {
      const seen = await handshake(pki, {
        ca: pki.caCertPem, cert: pki.adminCertPem, key: pki.adminKeyPem, servername: 'localhost',
      });
      expect(seen.error).toBeUndefined();
      expect(seen.authorized).toBe(true);
      expect(seen.subject).toMatchObject({ CN: 'kubernetes-admin', O: 'system:masters' });
    });

  it('a client that does not trust the CA refuses the server', async () => {
    const other = await mkdtemp(join(tmpdir(), 'kdp-pki-'));
    try {
      const otherPki = await ensurePki(other);
      const seen = await handshake(pki, { ca: otherPki.caCertPem });
      expect(seen.error).toMatch(/self.signed|unable to verify|certificate/i);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('a node certificate issued from the CA carries its name and group', async () => {
    const node = await issueClientCertificate(caOf(pki), {
      commonName: 'system:node:n1', organizations: ['system:nodes'],
    });
    const seen = await handshake(pki, {
      ca: pki.caCertPem, cert: node.certPem, key: node.keyPem, servername: 'localhost',
    });
    expect(seen.authorized).toBe(true);
    expect(seen.subject).toMatchObject({ CN: 'system:node:n1', O: 'system:nodes' });
  });
});
