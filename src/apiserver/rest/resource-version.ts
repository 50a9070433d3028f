// resourceVersion semantics of reads (upstream storage: APIObjectVersioner.ParseResourceVersion,
// etcd3 GetList/Get, the watch cache): a resourceVersion is an unsigned decimal revision; one
// newer than the store has is a 504 Timeout "Too large resource version" (upstream waits up to
// 3 s for it first; kdp's store has every committed revision at once, so it answers at once); an
// exact list at a compacted revision is 410 Expired.

import { kdpError } from '../../errors.js';
import type { KdpError } from '../../errors.js';
import { badRequest } from './errors.js';

/** The revision a resourceVersion names; undefined for '' (none). 400 for anything else. */
export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d+$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
    const why = /^\d+$/.test(rv) ? 'value out of range' : 'invalid syntax';
    throw badRequest(`invalid resource version: resourceVersion: Invalid value: ` +
      `${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${why}`);
  }
  return Number(rv);
}

/** 504 as storage.NewTooLargeResourceVersionError (retry after 1 s). */
export function tooLargeResourceVersion(wanted: number, current: number): KdpError {
  return kdpError('KDP_TIMEOUT', `Timeout: Too large resource version: ${wanted}, current: ` +
    `${current}`, { retryAfterSeconds: 1, causes: [{ field: '', reason:
      'ResourceVersionTooLarge', message: 'Too large resource version' }] });
}

/** 410 for a list at an exact revision that was compacted (etcd3 interpretListError). */
export function listTooOld(): KdpError {
  return kdpError('KDP_GONE', 'The resourceVersion for the provided list is too old.');
}
