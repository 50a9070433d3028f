// Chain names as upstream's proxier.go: a 16-character hash of the service-port name string
// and lower-case protocol (plus the endpoint `ip:port` for KUBE-SEP), SHA-256 → RFC 4648
// base32 (A–Z2–7) → first 16 characters.

import { sha256Base32x16 } from '../sha256.js';

/** First 16 base32 characters (80 bits = exactly the first 10 bytes) of SHA-256(input). */
export function hash16(input: string): string {
  return sha256Base32x16(input);
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
