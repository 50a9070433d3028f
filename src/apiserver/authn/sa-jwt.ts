// Compact JWS (RS256) as kube-apiserver's service-account token generator writes it with go-jose:
// header `{"alg":"RS256","kid":<key id>}`, the claims as one JSON object with its keys sorted at
// every level (go-jose merges the claim sets through a map), base64url without padding.
// Parsing never trusts a claim before the signature is verified; only the issuer is peeked at
// first, as upstream's hasCorrectIssuer does, to decide whether a token is ours at all.

import { createSign, createVerify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

export type JsonValue = string | number | boolean | null | JsonValue[] |
  { [k: string]: JsonValue };

/** A signed token, split and decoded, signature not yet checked. */
export interface ParsedJwt {
  readonly header: Record<string, JsonValue>;
  readonly payload: Record<string, JsonValue>;
  readonly signingInput: string;
  readonly signature: Buffer;
}

function sortedJson(v: JsonValue): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(v[k]!)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** Signs `payload` with RS256 under key id `kid`. */
export function signJwt(payload: Record<string, JsonValue>, key: KeyObject, kid: string): string {
  const input = `${b64(sortedJson({ alg: 'RS256', kid }))}.${b64(sortedJson(payload))}`;
  const sig = createSign('RSA-SHA256').update(input).sign(key);
  return `${input}.${sig.toString('base64url')}`;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

function decodeSegment(seg: string): Record<string, JsonValue> | undefined {
  if (!B64URL.test(seg)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(seg, 'base64url').toString('utf8')) as JsonValue;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Splits a compact JWS; undefined when it is not one (three base64url JSON segments). */
export function parseJwt(token: string): ParsedJwt | undefined {
  if (token.trimStart().startsWith('{')) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3 || !B64URL.test(parts[2]!)) return undefined;
  const header = decodeSegment(parts[0]!);
  const payload = decodeSegment(parts[1]!);
  if (!header || !payload) return undefined;
  return { header, payload, signingInput: `${parts[0]}.${parts[1]}`,
    signature: Buffer.from(parts[2]!, 'base64url') };
}

/** Whether `jwt` is RS256 and signed by `key`. */
export function verifyRs256(jwt: ParsedJwt, key: KeyObject): boolean {
  if (jwt.header.alg !== 'RS256') return false;
  try {
    return createVerify('RSA-SHA256').update(jwt.signingInput).verify(key, jwt.signature);
  } catch {
    return false;
  }
}
