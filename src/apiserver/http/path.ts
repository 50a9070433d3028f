// Parses resource URLs by hand (one wildcard route per prefix), as kubectl.md §3.5 describes:
// `/api/v1/namespaces/{ns}/{resource}[/{name}[/{sub}]]` is namespaced only when the segment
// after `{ns}` is a namespaced resource; `/api/v1/namespaces/foo/status` is the Namespace itself.

import type { ResourceCatalog } from '../resource-types.js';
import type { Target } from '../service.js';

export type ParsedPath =
  | { kind: 'groupVersion'; group: string; version: string }
  | { kind: 'group'; group: string }
  | { kind: 'resource'; target: Target }
  /** A name or namespace segment upstream refuses (IsValidPathSegmentName): 400. */
  | { kind: 'badName'; name: string; why: string }
  | { kind: 'invalid' };

function decode(s: string): string {
  try { return decodeURIComponent(s); } catch { return s; }
}

export function parsePath(cat: ResourceCatalog, path: string): ParsedPath {
  const segs = path.split('?')[0]!.split('/').filter((s) => s !== '').map(decode);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api') {
    if (segs.length < 2) return { kind: 'invalid' };
    group = '';
    version = segs[1]!;
    rest = segs.slice(2);
  } else if (segs[0] === 'apis') {
    if (segs.length === 2) return { kind: 'group', group: segs[1]! };
    if (segs.length < 3) return { kind: 'invalid' };
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else return { kind: 'invalid' };
  if (!rest.length) return { kind: 'groupVersion', group, version };
  // `/api/v1/watch/...`: upstream's deprecated watch prefix, the same target as a watch.
  const watch = rest[0] === 'watch' && rest.length > 1;
  if (watch) rest = rest.slice(1);
  // Names and namespaces never contain '/' and are never '.' or '..' (upstream path rules).
  const dots = rest.find((x) => x === '.' || x === '..');
  if (dots) return { kind: 'badName', name: dots, why: `may not be '${dots}'` };
  if (rest.some((x) => x.includes('/') || x === '')) return { kind: 'invalid' };
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const r = cat.find(group, version, rest[2]!);
    if (r?.namespaced) {
      if (rest.length > 5) return { kind: 'invalid' };
      return { kind: 'resource', target: { group, version, namespace: rest[1], resource: rest[2]!,
        name: rest[3], subresource: rest[4], ...(watch ? { watch } : {}) } };
    }
  }
  if (rest.length > 3) return { kind: 'invalid' };
  return { kind: 'resource', target: { group, version, resource: rest[0]!, name: rest[1],
    subresource: rest[2], ...(watch ? { watch } : {}) } };
}
