// The log store's size bound as a flag gives it: a byte count with an optional binary suffix
// (Ki, Mi, Gi), as the kubelet's containerLogMaxSize is written.

import { kdpError } from '../errors.js';

/** Smallest bound accepted: a store must hold a few segments. */
export const MIN_STORE_BYTES = 1024 * 1024;

/** Bytes of `256Mi`, `1Gi`, `500000000`; throws KDP_CONFIG naming `flag`. */
export function parseStoreSize(text: string, flag: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(text.trim());
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 } as const;
  const bytes = m ? Number(m[1]) * (m[2] ? unit[m[2] as keyof typeof unit] : 1) : NaN;
  if (!Number.isSafeInteger(bytes)) throw kdpError('KDP_CONFIG', `${flag}: "${text}" is not a size (e.g. 256Mi, 1Gi)`);
  if (bytes < MIN_STORE_BYTES) throw kdpError('KDP_CONFIG', `${flag}: ${text} is below the minimum of 1Mi`);
  return bytes;
}
