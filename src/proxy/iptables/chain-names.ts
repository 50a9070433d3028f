// Chain names as upstream's proxier.go: a 16-character hash of the service-port name string
// and lower-case protocol (plus the endpoint `ip:port` for KUBE-SEP), SHA-256 → RFC 4648
// base32 (A–Z2–7) → first 16 characters.

import * as crypto from 'node:crypto';

/** RFC 4648 base32 alphabet as character codes. */
const B32 = Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', (c) => c.charCodeAt(0));

/**
 * One-shot `crypto.hash` (Node ≥ 20.12) is ~2.5x faster than createHash for short inputs; hex
 * output avoids allocating a Buffer (and its ArrayBuffer) per hash: 100k+ per large sync.
 */
const sha256Hex: (s: string) => string = typeof crypto.hash === 'function'
  ? (s) => crypto.hash('sha256', s, 'hex')
  : (s) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');

/** First 16 base32 characters (80 bits = exactly the first 10 bytes) of SHA-256(input). */
export function hash16(input: string): string {
  const hex = sha256Hex(input);
  // Four groups of 20 bits (5 hex digits), 4 base32 characters each; one string allocation.
  const a = parseInt(hex.slice(0, 5), 16);
  const b = parseInt(hex.slice(5, 10), 16);
  const c = parseInt(hex.slice(10, 15), 16);
  const d = parseInt(hex.slice(15, 20), 16);
  return String.fromCharCode(
    B32[a >>> 15]!, B32[(a >>> 10) & 31]!, B32[(a >>> 5) & 31]!, B32[a & 31]!,
    B32[b >>> 15]!, B32[(b >>> 10) & 31]!, B32[(b >>> 5) & 31]!, B32[b & 31]!,
    B32[c >>> 15]!, B32[(c >>> 10) & 31]!, B32[(c >>> 5) & 31]!, B32[c & 31]!,
    B32[d >>> 15]!, B32[(d >>> 10) & 31]!, B32[(d >>> 5) & 31]!, B32[d & 31]!);
}

export const PREFIX = {
  svc: 'KUBE-SVC-', svl: 'KUBE-SVL-', fw: 'KUBE-FW-', ext: 'KUBE-EXT-', sep: 'KUBE-SEP-',
} as const;

/** The four per-service-port chains (`S` = `ns/name[:port]`, `proto` lower case). */
export function servicePortChains(S: string, proto: string):
  { svc: string; svl: string; fw: string; ext: string } {
  const h = hash16(S + proto);
  return { svc: PREFIX.svc + h, svl: PREFIX.svl + h, fw: PREFIX.fw + h, ext: PREFIX.ext + h };
}

/** KUBE-SEP-… of one endpoint (`ep` = `ip:port` or `[ip]:port`). */
export function endpointChainName(S: string, proto: string, ep: string): string {
  return PREFIX.sep + hash16(S + proto + ep);
}

/** Chains kube-proxy owns and deletes when stale (upstream isServiceChainName). */
export function isServiceChainName(name: string): boolean {
  return name.startsWith(PREFIX.svc) || name.startsWith(PREFIX.svl) ||
    name.startsWith(PREFIX.sep) || name.startsWith(PREFIX.fw) || name.startsWith(PREFIX.ext);
}
