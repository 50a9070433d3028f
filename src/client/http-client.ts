// The `Client` over the Kubernetes REST API (JSON), for components running apart from the API
// server (`kdp scheduler`, `kdp node`, ...). Same semantics as the in-process client: errors are
// KdpError built from the server's Status (code from its reason), watches stream
// newline-delimited JSON.

import { kdpError } from '../errors.js';
import { errorFromResponse } from './http-errors.js';
import { queryString, resourcePath } from './http-paths.js';
import { buildTransport, type Body, type TransportOptions } from './http-transport.js';
import { startHttpWatch } from './http-watch.js';
import type {
  Client, DeleteOptions, KubeList, KubeObject, PatchType, ResourceRef, WatchHandle,
} from './types.js';

export type HttpClientOptions = TransportOptions;

export interface HttpClient extends Client {
  /** Closes idle keep-alive connections; open watches end. */
  close(): void;
}

const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

const json = (v: unknown): Body => ({ contentType: 'application/json', data: JSON.stringify(v) });

function deleteBody(o: DeleteOptions): Body {
  return json({
    kind: 'DeleteOptions', apiVersion: 'v1',
    ...(o.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: o.gracePeriodSeconds } : {}),
    ...(o.propagationPolicy ? { propagationPolicy: o.propagationPolicy } : {}),
    ...(o.preconditions ? { preconditions: o.preconditions } : {}),
    ...(o.dryRun ? { dryRun: ['All'] } : {}),
  });
}

export function buildHttpClient(opts: HttpClientOptions): HttpClient {
  const t = buildTransport(opts);

  async function call<T>(method: string, path: string, body?: Body): Promise<T> {
    const { status, text } = await t.call(method, path, body);
    if (status < 200 || status >= 300) throw errorFromResponse(status, text);
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw kdpError('KDP_INTERNAL', `${method} ${path}: the server answered ${status} with a ` +
        'body that is not JSON', {}, e);
    }
  }

  const nameOf = (obj: KubeObject): string => {
    const n = obj.metadata?.name;
    if (!n) throw kdpError('KDP_BAD_REQUEST', 'update needs metadata.name');
    return n;
  };

  return {
    get: (ref, name, o = {}) => call('GET', resourcePath(ref, name, o.subresource)),
    list: <T extends KubeObject>(ref: ResourceRef, o: Parameters<Client['list']>[1] = {}) =>
      call<KubeList<T>>('GET', resourcePath(ref) + queryString({
        labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, limit: o.limit,
        continue: o.continue, resourceVersion: o.resourceVersion,
      })),
    create: (ref, obj, o = {}) => {
      const path = o.subresource
        ? resourcePath(ref, o.name ?? obj.metadata?.name ?? '', o.subresource)
        : resourcePath(ref);
      return call('POST', path + queryString({ dryRun: o.dryRun ? 'All' : undefined,
        fieldManager: o.fieldManager }), json(obj));
    },
    update: (ref, obj, o = {}) =>
      call('PUT', resourcePath(ref, nameOf(obj), o.subresource) + queryString({
        dryRun: o.dryRun ? 'All' : undefined, fieldManager: o.fieldManager }), json(obj)),
    patch: (ref, name, type, patch, o = {}) =>
      call('PATCH', resourcePath(ref, name, o.subresource) + queryString({
        dryRun: o.dryRun ? 'All' : undefined,
        fieldManager: o.fieldManager ?? (type === 'apply' ? 'kdp' : undefined),
        force: o.force,
      }), { contentType: PATCH_CONTENT_TYPES[type], data: JSON.stringify(patch) }),
    delete: (ref, name, o = {}) =>
      call('DELETE', resourcePath(ref, name) +
        queryString({ dryRun: o.dryRun ? 'All' : undefined }), deleteBody(o)),
    watch(ref, o, handlers): WatchHandle {
      const path = resourcePath(ref) + queryString({
        watch: 'true', resourceVersion: o.resourceVersion, labelSelector: o.labelSelector,
        fieldSelector: o.fieldSelector, allowWatchBookmarks: o.allowWatchBookmarks,
      });
      return startHttpWatch(t, path, handlers);
    },
    close: () => t.close(),
  };
}
