// REST paths and query strings of the Kubernetes API, as client-go's request builder makes them:
// `/api/v1` for the core group, `/apis/<group>/<version>` otherwise, then
// `[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]`.

import type { ResourceRef } from './types.js';

const seg = encodeURIComponent;

export function resourcePath(ref: ResourceRef, name?: string, subresource?: string): string {
  const root = ref.group === '' ? `/api/${seg(ref.version)}`
    : `/apis/${seg(ref.group)}/${seg(ref.version)}`;
  const ns = ref.namespace ? `/namespaces/${seg(ref.namespace)}` : '';
  let p = `${root}${ns}/${seg(ref.resource)}`;
  if (name !== undefined) p += `/${seg(name)}`;
  if (subresource) p += `/${subresource.split('/').map(seg).join('/')}`;
  return p;
}

/** `?a=1&b=x` from the defined, non-empty entries (in the given order), or ''. */
export function queryString(q: Record<string, string | number | boolean | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === '' || v === false) continue;
    parts.push(`${seg(k)}=${seg(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}
