// Media types of requests and responses.

import type { PatchType } from '../../client/types.js';
import { kdpError } from '../../errors.js';
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

/** Types the server can answer in (JSON is sent for all three, as every client reads it). */
const OUTPUT_TYPES = new Set(['application/json', 'application/yaml',
  'application/vnd.kubernetes.protobuf', '*/*', 'application/*']);
const META_AS = new Set(['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);

/** One media range of an Accept header the server can satisfy. */
function acceptable(range: string): boolean {
  const [type, ...params] = range.split(';');
  if (!OUTPUT_TYPES.has(type!.trim().toLowerCase())) return false;
  let as: string | undefined;
  let g: string | undefined;
  let v: string | undefined;
  for (const p of params) {
    const eq = p.indexOf('=');
    const k = p.slice(0, eq).trim();
    const val = p.slice(eq + 1).trim();
    if (k === 'as') as = val; else if (k === 'g') g = val; else if (k === 'v') v = val;
  }
  if (as === undefined) return true;
  return META_AS.has(as) && g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1');
}

/**
 * Output negotiation of a resource request (upstream NegotiateOutputMediaType): 406 when no
 * media range of the Accept header can be answered. Checked before the request runs.
 */
export function checkAccept(accept: string | undefined): void {
  if (!accept || accept === 'application/json') return;
  for (const range of accept.split(',')) if (acceptable(range)) return;
  throw kdpError('KDP_NOT_ACCEPTABLE', 'only the following media types are accepted: ' +
    'application/json, application/yaml, application/vnd.kubernetes.protobuf');
}
