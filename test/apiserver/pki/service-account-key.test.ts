import { createHash, createPublicKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensureServiceAccountKey, keyIdOf,
} from '../../../src/apiserver/pki/service-account-key.js';
import { isKdpError } from '../../../src/errors.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'kdp-sakey-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('service-account signing key', () => {
  it('is created once as kubeadm names it (sa.key PKCS#1 RSA, sa.pub PKIX), private files', async () => {
    const k = await ensureServiceAccountKey(dir);
    const keyText = await readFile(join(dir, 'sa.key'), 'utf8');
    const pubText = await readFile(join(dir, 'sa.pub'), 'utf8');
    expect(keyText).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(pubText).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect((await stat(join(dir, 'sa.key'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'sa.pub'))).mode & 0o777).toBe(0o600);
    expect(k.privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const again = await ensureServiceAccountKey(dir);
    expect(again.keyId).toBe(k.keyId);
    expect(await readFile(join(dir, 'sa.key'), 'utf8')).toBe(keyText);
  });

  it('key id is base64url SHA-256 of the DER public key, as upstream', async () => {
    const k = await ensureServiceAccountKey(dir);
    const der = createPublicKey(k.publicKeyPem).export({ type: 'spki', format: 'der' });
    const want = createHash('sha256').update(der).digest('base64')
      .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    expect(k.keyId).toBe(want);
    expect(keyIdOf(k.publicKey)).toBe(want);
    expect(k.keyId).toHaveLength(43);
  });

  it('rewrites a missing sa.pub from sa.key, keeps the key', async () => {
    const k = await ensureServiceAccountKey(dir);
    await unlink(join(dir, 'sa.pub'));
    const again = await ensureServiceAccountKey(dir);
    expect(again.keyId).toBe(k.keyId);
    expect(await readFile(join(dir, 'sa.pub'), 'utf8')).toMatch(/BEGIN PUBLIC KEY/);
  });

  it('refuses a public key without its private key, and a mismatched pair', async () => {
    await ensureServiceAccountKey(dir);
    const pub = await readFile(join(dir, 'sa.pub'), 'utf8');
    await unlink(join(dir, 'sa.key'));
    await expect(ensureServiceAccountKey(dir)).rejects.toSatisfy((e: unknown) =>
      isKdpError(e, 'KDP_CONFIG') && /sa\.pub exists without .*sa\.key/.test((e as Error).message));
    await unlink(join(dir, 'sa.pub'));
    await ensureServiceAccountKey(dir);
    await writeFile(join(dir, 'sa.pub'), pub);
    await expect(ensureServiceAccountKey(dir)).rejects.toSatisfy((e: unknown) =>
      isKdpError(e, 'KDP_CONFIG') && /is not the public key of/.test((e as Error).message));
  });

  it('refuses a sa.key that is not an RSA private key, naming the file', async () => {
    await writeFile(join(dir, 'sa.key'), 'garbage');
    await expect(ensureServiceAccountKey(dir)).rejects.toSatisfy((e: unknown) =>
      isKdpError(e, 'KDP_CONFIG') && (e as Error).message.includes('sa.key'));
  });
});
