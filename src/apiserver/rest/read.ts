// get and list, with label/field selectors and limit/continue paging.

import { isKdpError, kdpError } from '../../errors.js';
import type { KubeList, KubeObject, ListOptions } from '../../client/types.js';
import type { KeyValue } from '../../store/types.js';
import type { ServedResource } from '../resource-types.js';
import { groupVersion } from '../resource-types.js';
import { decodeObject } from './codec.js';
import type { ServiceDeps } from './deps.js';
import { badRequest, notFound } from './errors.js';
import { collectionPrefix, objectKey } from './keys.js';
import { listTooOld, parseResourceVersion, tooLargeResourceVersion } from './resource-version.js';

/** A list's options as the API serves them (ListOptions validated by the HTTP layer). */
export interface ServiceListOptions extends ListOptions {
  /** 'Exact' lists at resourceVersion; 'NotOlderThan' (or absent) at least at it. */
  readonly resourceVersionMatch?: string;
}

export async function readObject(
  deps: ServiceDeps, r: ServedResource, namespace: string | undefined, name: string,
): Promise<{ obj: KubeObject; kv: KeyValue }> {
  const kv = await deps.store.get(objectKey(r, namespace, name));
  if (!kv) throw notFound(r, name);
  return { obj: decodeObject(kv), kv };
}

export type ObjectFilter = (obj: KubeObject) => boolean;

export function buildFilter(
  deps: ServiceDeps, r: ServedResource, opts: { labelSelector?: string; fieldSelector?: string },
): ObjectFilter | undefined {
  const ls = opts.labelSelector?.trim() ?
    deps.rules.compileLabelSelector(opts.labelSelector) : undefined;
  const fs = opts.fieldSelector?.trim() ?
    deps.rules.compileFieldSelector(r, opts.fieldSelector) : undefined;
  if (!ls && !fs) return undefined;
  return (o) => (!ls || ls(o.metadata.labels ?? {})) && (!fs || fs(o));
}

interface ContinueToken { rv: number; start: string }

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeContinue(s: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ContinueToken;
    if (typeof t.rv === 'number' && typeof t.start === 'string') return t;
  } catch { /* fall through */ }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion');
}

/**
 * The revision an exact list reads at (undefined: the current one). A resourceVersion newer
 * than the store's is 504 whatever the match; continue tokens carry their own revision.
 */
function atRevision(deps: ServiceDeps, opts: ServiceListOptions): number | undefined {
  const rv = parseResourceVersion(opts.resourceVersion);
  if (rv === undefined || rv === 0 || opts.continue) return undefined;
  const current = deps.store.currentRevision();
  if (rv > current) throw tooLargeResourceVersion(rv, current);
  return opts.resourceVersionMatch === 'Exact' ? rv : undefined;
}

export async function listObjects(
  deps: ServiceDeps, r: ServedResource, namespace: string | undefined, opts: ServiceListOptions,
): Promise<KubeList> {
  const filter = buildFilter(deps, r, opts);
  const exact = atRevision(deps, opts);
  const prefix = collectionPrefix(r, namespace);
  const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
  let rev: number | undefined = exact;
  let startAfter: string | undefined;
  if (opts.continue) {
    const t = decodeContinue(opts.continue);
    rev = t.rv;
    startAfter = prefix + t.start;
  }
  const items: KubeObject[] = [];
  let more = false;
  let remaining = 0;
  let lastKey = '';
  try {
    for (;;) {
      const page = await deps.store.list(prefix, { revision: rev, limit, startAfter });
      rev = page.revision;
      let i = 0;
      for (; i < page.items.length && !(limit && items.length >= limit); i++) {
        const kv = page.items[i]!;
        lastKey = kv.key;
        const o = decodeObject(kv);
        if (!filter || filter(o)) items.push(o);
      }
      const leftInPage = page.items.length - i;
      more = leftInPage > 0 || page.more;
      remaining = leftInPage + (page.more ? page.remaining : 0);
      if (!limit || items.length >= limit || !page.more) break;
      startAfter = lastKey;
    }
  } catch (e) {
    if (isKdpError(e, 'KDP_GONE') && opts.continue) {
      throw kdpError('KDP_GONE', 'The provided continue parameter is too old to display a ' +
        'consistent list result. You can start a new list without the continue parameter.');
    }
    if (isKdpError(e, 'KDP_GONE') && exact !== undefined) throw listTooOld();
    throw e;
  }
  const meta: KubeList['metadata'] = { resourceVersion: String(rev) };
  if (limit && more) {
    meta.continue = encodeContinue({ rv: rev!, start: lastKey.slice(prefix.length) });
    if (!filter) meta.remainingItemCount = remaining;
  }
  return { apiVersion: groupVersion(r), kind: r.listKind, metadata: meta, items };
}
