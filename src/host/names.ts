// Object names → kernel names. Everything kdp makes in the kernel starts with `kdp`, is made of
// [a-z0-9-] only, and fits the kernel's limits (IFNAMSIZ-1 = 15 bytes for links). Names that do
// not fit are shortened deterministically with a hash of the full name, and a registry refuses
// two owners mapping to one kernel name.

import { createHash } from 'node:crypto';

export const KERNEL_PREFIX = 'kdp';
export const LINK_NAME_MAX = 15;
/** Network namespace names are file names under /run/netns; keep them readable but bounded. */
export const NETNS_NAME_MAX = 64;

export function sanitize(raw: string): string {
  return raw.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
}

/**
 * `kdp-<part>-<part>` bounded to `max` characters. When the readable form is too long, keeps a
 * readable head and appends `-` + 6 hex digits of sha256 over the unsanitised parts.
 */
export function boundedName(parts: readonly string[], max: number): string {
  const readable = [KERNEL_PREFIX, ...parts.map(sanitize).filter(Boolean)].join('-');
  if (readable.length <= max && readable === [KERNEL_PREFIX, ...parts].join('-')) return readable;
  const hash = createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 6);
  const head = readable.slice(0, max - hash.length - 1).replace(/-$/, '');
  return `${head}-${hash}`;
}

export function linkName(...parts: string[]): string {
  return boundedName(parts, LINK_NAME_MAX);
}

export function netnsName(...parts: string[]): string {
  return boundedName(parts, NETNS_NAME_MAX);
}
