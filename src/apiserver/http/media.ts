// Media types of requests and responses.

import type { PatchType } from '../../client/types.js';
import type { AggregatedVersion } from '../discovery.js';

/** The media type without parameters, lower case ('' when absent). */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept);
}

/** Which aggregated discovery format the client accepts, if any (v2 preferred). */
export function aggregatedVersion(accept: string | undefined): AggregatedVersion | undefined {
  if (!accept || !accept.includes('as=APIGroupDiscoveryList')) return undefined;
  for (const part of accept.split(',')) {
    if (!part.includes('as=APIGroupDiscoveryList')) continue;
    if (/(^|;)\s*v=v2\s*(;|$)/.test(part)) return 'v2';
  }
  return accept.includes('v=v2beta1') ? 'v2beta1' : undefined;
}

export const PATCH_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};
