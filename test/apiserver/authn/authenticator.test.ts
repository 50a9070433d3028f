import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anonymousUser, buildAuthenticator, peerCertificateOf,
} from '../../../src/apiserver/authn/index.js';
import { parseTokenFile, splitCsvLine } from '../../../src/apiserver/authn/token-file.js';
import { isKdpError } from '../../../src/errors.js';

let dir: string;
let tokenFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kdp-authn-'));
  tokenFile = join(dir, 'tokens.csv');
  await writeFile(tokenFile, [
    's3cr3t,kubernetes-admin,admin-uid,"system:masters"',
    '',
    'jane-token,jane,jane-uid,"dev,ops"',
    'nogroups,bob,',
  ].join('\n'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

describe('bearer tokens from a token file', () => {
  it('a known token authenticates its user with system:authenticated added', () => {
    const a = buildAuthenticator({ tokenFile });
    expect(a.authenticate(bearer('jane-token'))).toEqual({
      name: 'jane', uid: 'jane-uid', groups: ['dev', 'ops', 'system:authenticated'],
    });
  });

  it('a line without a groups column gives a user with only system:authenticated', () => {
    const a = buildAuthenticator({ tokenFile });
    expect(a.authenticate(bearer('nogroups'))).toEqual({
      name: 'bob', groups: ['system:authenticated'],
    });
  });

  it('a wrong token is rejected with KDP_UNAUTHORIZED', () => {
    const a = buildAuthenticator({ tokenFile });
    let err: unknown;
    try { a.authenticate(bearer('nope')); } catch (e) { err = e; }
    expect(isKdpError(err, 'KDP_UNAUTHORIZED')).toBe(true);
    expect((err as Error).message).toBe('Unauthorized');
  });

  it('no Authorization header, another scheme or an empty token count as no credentials', () => {
    const a = buildAuthenticator({ tokenFile });
    expect(a.authenticate({ headers: {} })).toBeNull();
    expect(a.authenticate({ headers: { authorization: 'Basic YTpi' } })).toBeNull();
    expect(a.authenticate({ headers: { authorization: 'Bearer ' } })).toBeNull();
  });

  it('the scheme is matched case-insensitively, as upstream', () => {
    const a = buildAuthenticator({ tokenFile });
    expect(a.authenticate({ headers: { authorization: 'bearer s3cr3t' } })?.name)
      .toBe('kubernetes-admin');
  });

  it('a malformed token file line is a KDP_CONFIG error naming the line', () => {
    let err: unknown;
    try { parseTokenFile('ok,u,1\nonly,two\n', '/x/tokens.csv'); } catch (e) { err = e; }
    expect(isKdpError(err, 'KDP_CONFIG')).toBe(true);
    expect((err as Error).message).toContain('/x/tokens.csv line 2');
    expect((err as Error).message).toContain('at least 3 columns');
  });

  it('a missing token file is a KDP_CONFIG error', () => {
    expect(() => buildAuthenticator({ tokenFile: join(dir, 'absent.csv') }))
      .toThrow(/cannot read token file/);
  });

  it('CSV quoting follows RFC 4180', () => {
    expect(splitCsvLine('a, "b,c" ,d')).toBeNull();
    expect(splitCsvLine('a,"b ""q"", c",d')).toEqual(['a', 'b "q", c', 'd']);
    expect(splitCsvLine('"unterminated')).toBeNull();
  });
});

describe('client certificates', () => {
  const peer = { subjectCN: 'system:node:n1', subjectO: ['system:nodes'] };

  it('user is the CN and groups are the O values', () => {
    const a = buildAuthenticator({ clientCertificates: true });
    expect(a.authenticate({ headers: {}, peerCertificate: peer })).toEqual({
      name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'],
    });
  });

  it('a certificate wins over a bearer token, as in upstream\'s union order', () => {
    const a = buildAuthenticator({ tokenFile, clientCertificates: true });
    expect(a.authenticate({ ...bearer('nope'), peerCertificate: peer })?.name)
      .toBe('system:node:n1');
  });

  it('certificates are ignored unless enabled', () => {
    const a = buildAuthenticator({});
    expect(a.authenticate({ headers: {}, peerCertificate: peer })).toBeNull();
  });

  it('peerCertificateOf reads only verified peers and accepts several O values', () => {
    const cert = { subject: { CN: 'alice', O: ['a', 'b'] } };
    const sock = (authorized: boolean) => ({
      authorized, getPeerCertificate: () => cert as never,
    });
    expect(peerCertificateOf(sock(true))).toEqual({ subjectCN: 'alice', subjectO: ['a', 'b'] });
    expect(peerCertificateOf(sock(false))).toBeUndefined();
    expect(peerCertificateOf(undefined)).toBeUndefined();
  });
});

describe('anonymous', () => {
  it('is system:anonymous in group system:unauthenticated', () => {
    expect(anonymousUser()).toEqual({
      name: 'system:anonymous', groups: ['system:unauthenticated'],
    });
  });
});
