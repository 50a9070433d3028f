// Detached JWS signatures of cluster-info (k8s.io/cluster-bootstrap/token/jws): HS256 over the
// content with the token secret as key (zero-padded to 32 bytes, as upstream pads it for
// go-jose), protected header {"alg":"HS256","kid":"<token id>"}, and the payload left out of
// the compact form (`header..signature`, RFC 7515 appendix F). Verification recomputes and
// compares, as DetachedTokenIsValid does.

import { createHmac, timingSafeEqual } from 'node:crypto';

const b64url = (b: Buffer) => b.toString('base64url');

export function computeDetachedSignature(content: string, tokenId: string, tokenSecret: string): string {
  const raw = Buffer.from(tokenSecret, 'utf8');
  const key = raw.length < 32 ? Buffer.concat([raw, Buffer.alloc(32 - raw.length)]) : raw;
  // encoding/json marshals go-jose's header map with sorted keys: alg before kid.
  const header = b64url(Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenId }), 'utf8'));
  const payload = b64url(Buffer.from(content, 'utf8'));
  const sig = b64url(createHmac('sha256', key).update(`${header}.${payload}`).digest());
  return `${header}..${sig}`;
}

export function detachedSignatureIsValid(detached: string, content: string, tokenId: string,
  tokenSecret: string): boolean {
  const want = Buffer.from(computeDetachedSignature(content, tokenId, tokenSecret), 'utf8');
  const got = Buffer.from(detached, 'utf8');
  return got.length === want.length && timingSafeEqual(got, want);
}
