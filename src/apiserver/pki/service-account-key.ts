// The service-account signing key pair, as kubeadm keeps it: `sa.key` (RSA private key, PKCS#1
// PEM) and `sa.pub` (PKIX public key PEM) in the cluster PKI directory. `ensureServiceAccountKey`
// is create-or-verify: both absent → a new 2048-bit pair; the private key alone → its public
// half is written; a public key without its private key, or a pair that does not match, is
// refused (KDP_CONFIG) rather than replaced, because replacing it would invalidate every token
// already issued. Writes go through a temporary file and a rename, mode 0600.

import {
  createHash, createPrivateKey, createPublicKey, generateKeyPair, randomBytes,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { kdpError } from '../../errors.js';
import { ensurePrivateDir, writePrivateFile } from '../../util/private-files.js';
import { readIfPresent } from './index.js';

export const SA_KEY_FILE = 'sa.key';
export const SA_PUB_FILE = 'sa.pub';

export interface ServiceAccountKey {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly privateKeyPem: string;
  readonly publicKeyPem: string;
  /** As upstream's keyIDFromPublicKey: base64url (no padding) SHA-256 of the PKIX DER. */
  readonly keyId: string;
}

/** Upstream's key id of a public key (the JWT `kid` header). */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

const generate = promisify(generateKeyPair);

async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  await writePrivateFile(tmp, text);
  await rename(tmp, path);
}

function parsePrivate(pem: string, path: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (e) {
    throw kdpError('KDP_CONFIG', `${path} is not a PEM private key: ${(e as Error).message}`, {},
      e);
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw kdpError('KDP_CONFIG', `${path} holds a ${key.asymmetricKeyType} key; the ` +
      'service-account signing key must be RSA (RS256)');
  }
  return key;
}

function parsePublic(pem: string, path: string): KeyObject {
  try {
    return createPublicKey(pem);
  } catch (e) {
    throw kdpError('KDP_CONFIG', `${path} is not a PEM public key: ${(e as Error).message}`, {}, e);
  }
}

function keyOf(privateKey: KeyObject, privateKeyPem: string, publicKeyPem: string):
  ServiceAccountKey {
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, privateKeyPem, publicKeyPem, keyId: keyIdOf(publicKey) };
}

/** Creates (once) or loads and checks `<pkiDir>/sa.key` and `sa.pub`; see the module comment. */
export async function ensureServiceAccountKey(pkiDir: string): Promise<ServiceAccountKey> {
  await ensurePrivateDir(pkiDir);
  const keyPath = join(pkiDir, SA_KEY_FILE);
  const pubPath = join(pkiDir, SA_PUB_FILE);
  const [keyPem, pubPem] = [await readIfPresent(keyPath), await readIfPresent(pubPath)];
  if (keyPem === undefined) {
    if (pubPem !== undefined) {
      throw kdpError('KDP_CONFIG', `${pubPath} exists without ${keyPath}: tokens signed by its ` +
        `private key could not be issued (restore ${SA_KEY_FILE}, or remove both to make a new ` +
        'pair)');
    }
    const { privateKey } = await generate('rsa', { modulusLength: 2048 });
    const privateKeyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const publicKeyPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' })
      .toString();
    await writeAtomically(keyPath, privateKeyPem);
    await writeAtomically(pubPath, publicKeyPem);
    return keyOf(privateKey, privateKeyPem, publicKeyPem);
  }
  const privateKey = parsePrivate(keyPem, keyPath);
  const derived = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  if (pubPem === undefined) {
    await writeAtomically(pubPath, derived);
    return keyOf(privateKey, keyPem, derived);
  }
  const pub = parsePublic(pubPem, pubPath);
  if (keyIdOf(pub) !== keyIdOf(createPublicKey(privateKey))) {
    throw kdpError('KDP_CONFIG', `${pubPath} is not the public key of ${keyPath}`);
  }
  return keyOf(privateKey, keyPem, pubPem);
}
