// pod-template-hash: FNV-32a over a canonical form of the pod template (plus the collision
// count), printed in decimal and mapped onto upstream's "safe" alphabet (rand.SafeEncodeString),
// so names look like upstream's (`web-7d9c8b5f4`). Upstream hashes a spew dump of the Go struct;
// kdp hashes sorted-key JSON, so the values differ but the shape and stability match.

import type { PodTemplateSpec } from '../../api/types.js';

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function fnv32a(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function computeHash(
  template: PodTemplateSpec | undefined, collisionCount?: number,
): string {
  let h = fnv32a(new TextEncoder().encode(canonicalJson(template ?? {})));
  if (collisionCount !== undefined && collisionCount !== null) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv32a(b, h);
  }
  return [...String(h)].map((ch) => ALPHANUMS[ch.charCodeAt(0) % ALPHANUMS.length]).join('');
}

/** Templates equal apart from the pod-template-hash label (upstream EqualIgnoreHash). */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined) {
  const strip = (t: PodTemplateSpec | undefined) => {
    const labels = { ...(t?.metadata?.labels ?? {}) };
    delete labels[POD_TEMPLATE_HASH_LABEL];
    return canonicalJson({ ...t, metadata: { ...(t?.metadata ?? {}), labels } });
  };
  return strip(a) === strip(b);
}
