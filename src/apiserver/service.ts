// The transport-independent API service: every verb on every served resource, through
// authorization → admission → defaulting → validation → storage. The HTTP routes and the
// in-process client both call this, so they share semantics.

import type {
  DeleteOptions, KubeList, KubeObject, ListOptions, PatchType, WatchHandle,
} from '../client/types.js';
import { isKdpError } from '../errors.js';
import type { ResourceCatalog, ServedResource } from './resource-types.js';
import { isReviewResource } from './resources.js';
import {
  defaultComponentProbes, getComponentStatus, isComponentStatuses, listComponentStatuses,
} from './rest/component-status.js';
import { getComputed, isComputedMetrics, listComputed } from '../metrics/catalog.js';
import { authorize } from './rest/authorize.js';
import type { LogOptions, RequestContext, ServiceDeps } from './rest/deps.js';
import { deleteObject } from './rest/delete.js';
import { badRequest, methodNotAllowed, pathNotFound } from './rest/errors.js';
import {
  checkBody, checkPatchedScale, checkPatchedTypes, checkScaleBody,
} from './rest/prepare.js';
import { clone, servedJson, withEncoding } from './rest/codec.js';
import { listObjects, readObject } from './rest/read.js';
import { fromScale, toScale } from './rest/scale.js';
import { buildSharedDecoder, startWatch } from './rest/watch.js';
import type { ServiceWatchOptions, WatchSink } from './rest/watch.js';
import { createObject, guaranteedUpdate } from './rest/write.js';
import type { WriteCtx } from './rest/write.js';
import { applyPatch } from './rest/patching.js';
import {
  checkAppliedType, checkName, checkPatchedIdentity, checkPutUid,
} from './rest/patch-identity.js';
import { serverSideApply } from './patch/apply.js';
import { bindPod, reviewAccess } from './rest/special.js';
import { evictPod } from './rest/eviction.js';
import { requestToken } from './rest/token-request.js';
import { isSelfReview, selfReview } from './rest/self-review.js';
import { podLogs } from './rest/logs.js';
import { deleteNamespace } from './rest/namespace-delete.js';
import { isNamespaces } from './rest/namespace-spec.js';

/** Addresses a collection, an object or an object's subresource. */
export interface Target {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  /** Addressed through the deprecated `/watch/` path prefix (a watch whatever the query). */
  readonly watch?: boolean;
}

export interface WriteOpts {
  readonly dryRun?: boolean;
  readonly fieldManager?: string;
}

export interface ApiService {
  readonly catalog: ResourceCatalog;
  readonly deps: ServiceDeps;
  /** The served resource, or 404 `the server could not find the requested resource`. */
  resolve(t: Target): ServedResource;
  /**
   * Throws what the verb's call would before reading its body: 404 unknown resource, 405 verb
   * not served, 403 not allowed. (Upstream authorizes before decoding a body.)
   */
  authorize(ctx: RequestContext, t: Target, verb: string): Promise<void>;
  get(ctx: RequestContext, t: Target): Promise<KubeObject>;
  list(ctx: RequestContext, t: Target, opts: ListOptions): Promise<KubeList>;
  create(ctx: RequestContext, t: Target, body: unknown, opts: WriteOpts): Promise<KubeObject>;
  /** `created` is true when a PUT created a missing object (Lease, Endpoints, Event). */
  update(ctx: RequestContext, t: Target, body: unknown, opts: WriteOpts):
    Promise<{ obj: KubeObject; created: boolean }>;
  /** `created` is true when an apply patch created the object. */
  patch(ctx: RequestContext, t: Target, type: PatchType, body: unknown,
    opts: WriteOpts & { force?: boolean }): Promise<{ obj: KubeObject; created: boolean }>;
  delete(ctx: RequestContext, t: Target, opts: DeleteOptions): Promise<KubeObject>;
  deleteCollection(ctx: RequestContext, t: Target, list: ListOptions, opts: DeleteOptions):
    Promise<KubeList>;
  watch(ctx: RequestContext, t: Target, opts: ServiceWatchOptions, sink: WatchSink):
    Promise<WatchHandle>;
  logs(ctx: RequestContext, t: Target, opts: LogOptions): Promise<string | AsyncIterable<string | Uint8Array>>;
}

/** Resources whose PUT creates a missing object (upstream AllowCreateOnUpdate). */
const CREATE_ON_UPDATE = new Set(['/endpoints', '/events', 'coordination.k8s.io/leases']);

function createsOnUpdate(r: ServedResource): boolean {
  return CREATE_ON_UPDATE.has(`${r.group}/${r.resource}`);
}

function needName(t: Target): string {
  if (!t.name) throw methodNotAllowed('the resource name is required for this operation');
  return t.name;
}

export function buildApiService(deps: ServiceDeps): ApiService {
  const { catalog } = deps;
  const sharedDecode = buildSharedDecoder();
  const resolve = (t: Target): ServedResource => {
    const r = catalog.find(t.group, t.version, t.resource);
    if (!r) throw pathNotFound();
    if (t.subresource && !r.subresources.some((s) => s.name === t.subresource)) {
      throw pathNotFound();
    }
    if (r.namespaced && t.name && !t.namespace) throw pathNotFound();
    return r;
  };
  const ns = (r: ServedResource, t: Target) => (r.namespaced ? t.namespace : undefined);
  /** Checks the verb is served (405 otherwise), then authorizes it. */
  const az = (ctx: RequestContext, verb: string, r: ServedResource, t: Target,
    fieldSelector?: string) => {
    const sub = t.subresource ? r.subresources.find((s) => s.name === t.subresource) : undefined;
    const verbs = sub ? sub.verbs : r.verbs;
    if (!verbs.includes(verb)) {
      throw methodNotAllowed('the server does not allow this method on the requested resource');
    }
    return authorize(deps, ctx, { verb, r, namespace: ns(r, t), name: t.name,
      subresource: t.subresource, fieldSelector });
  };

  const svc: ApiService = {
    catalog, deps, resolve,
    async authorize(ctx, t, verb) {
      await az(ctx, verb, resolve(t), t);
    },
    async get(ctx, t) {
      const r = resolve(t);
      await az(ctx, 'get', r, t);
      if (isComponentStatuses(r)) {
        return getComponentStatus(deps.componentStatuses ?? defaultComponentProbes(), needName(t));
      }
      if (deps.metricsApi && isComputedMetrics(r)) return getComputed(deps, r, t.namespace, needName(t)) as never;
      const { obj, kv } = await readObject(deps, r, ns(r, t), needName(t));
      if (t.subresource === 'scale') return toScale(obj);
      return withEncoding(obj, servedJson(kv.value, obj, obj.metadata.resourceVersion!));
    },
    async list(ctx, t, opts) {
      const r = resolve(t);
      await az(ctx, 'list', r, t, opts.fieldSelector);
      if (isComponentStatuses(r)) {
        return listComponentStatuses(deps.componentStatuses ?? defaultComponentProbes()) as never;
      }
      if (deps.metricsApi && isComputedMetrics(r)) return listComputed(deps, r, t.namespace, opts) as never;
      return listObjects(deps, r, ns(r, t), opts);
    },
    async create(ctx, t, body, opts) {
      const r = resolve(t);
      await az(ctx, 'create', r, t);
      if (isSelfReview(r)) return selfReview(deps, ctx, r, body);
      if (isReviewResource(r)) return reviewAccess(deps, ctx, r, body);
      if (t.subresource === 'binding') return bindPod(deps, { ...ctx, ...opts }, r, t, body);
      if (t.subresource === 'eviction') return evictPod(deps, { ...ctx, ...opts }, r, t, body);
      if (t.subresource === 'token') return requestToken(deps, ctx, r, t, body);
      if (t.subresource) throw methodNotAllowed(`create is not supported on ${t.subresource}`);
      const obj = checkBody(r, body, ns(r, t));
      return createObject(deps, { ...ctx, ...opts }, r, obj);
    },
    async update(ctx, t, body, opts) {
      const r = resolve(t);
      const name = needName(t);
      await az(ctx, 'update', r, t);
      const wctx: WriteCtx = { ...ctx, ...opts, subresource: t.subresource };
      if (t.subresource === 'scale') {
        const scale = checkScaleBody(body);
        const sn = scale.metadata?.name;
        if (sn) checkName(sn, name);
        const out = await guaranteedUpdate(deps, wctx, r, ns(r, t), name,
          (p) => fromScale(p, scale));
        return { obj: toScale(out.obj), created: false };
      }
      const obj = checkBody(r, body, ns(r, t));
      if (obj.metadata.name && obj.metadata.name !== name) {
        throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name ` +
          `on the URL (${name})`);
      }
      try {
        const out = await guaranteedUpdate(deps, wctx, r, ns(r, t), name, (cur) => {
          checkPutUid(r, cur, obj);
          return clone(obj);
        });
        return { obj: out.obj, created: false };
      } catch (e) {
        if (!isKdpError(e, 'KDP_NOT_FOUND') || t.subresource || !createsOnUpdate(r)) throw e;
      }
      await az(ctx, 'create', r, t);
      obj.metadata.name = name;
      delete obj.metadata.resourceVersion;
      return { obj: await createObject(deps, { ...ctx, ...opts }, r, obj), created: true };
    },
    async patch(ctx, t, type, body, opts) {
      const r = resolve(t);
      const name = needName(t);
      await az(ctx, 'patch', r, t);
      const wctx: WriteCtx = { ...ctx, ...opts, subresource: t.subresource };
      if (type === 'apply') return applyObject(wctx, r, t, name, body, !!opts.force);
      const mutate = t.subresource === 'scale' ?
        (p: KubeObject) =>
          fromScale(p, checkPatchedScale(type, body, applyPatch(toScale(p), type, body))) :
        (p: KubeObject) => {
          const uid = p.metadata.uid;
          const out = applyPatch(p, type, body);
          checkPatchedIdentity(r, uid, out, name, ns(r, t));
          checkPatchedTypes(r, type, body, out);
          return out;
        };
      const out = await guaranteedUpdate(deps, wctx, r, ns(r, t), name, mutate);
      return { obj: t.subresource === 'scale' ? toScale(out.obj) : out.obj, created: false };
    },
    async delete(ctx, t, opts) {
      const r = resolve(t);
      const name = needName(t);
      if (t.subresource) throw methodNotAllowed('delete is not supported on subresources');
      await az(ctx, 'delete', r, t);
      if (isNamespaces(r)) return deleteNamespace(deps, ctx, r, name, opts);
      return (await deleteObject(deps, ctx, r, ns(r, t), name, opts)).obj;
    },
    async deleteCollection(ctx, t, listOpts, opts) {
      const r = resolve(t);
      await az(ctx, 'deletecollection', r, t);
      const list = await listObjects(deps, r, ns(r, t), { ...listOpts, limit: 0 });
      const items: KubeObject[] = [];
      for (const o of list.items) {
        try {
          const m = o.metadata;
          items.push(isNamespaces(r) ? await deleteNamespace(deps, ctx, r, m.name!, opts) :
            (await deleteObject(deps, ctx, r, m.namespace, m.name!, opts)).obj);
        } catch (e) {
          if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
        }
      }
      return { ...list, items };
    },
    async watch(ctx, t, opts, sink) {
      const r = resolve(t);
      await az(ctx, 'watch', r, t, opts.fieldSelector);
      return startWatch(deps, r, ns(r, t), opts, sink, sharedDecode);
    },
    async logs(ctx, t, opts) {
      const r = resolve({ ...t, subresource: 'log' });
      await az(ctx, 'get', r, { ...t, subresource: 'log' });
      const { obj } = await readObject(deps, r, ns(r, t), needName(t));
      return podLogs(deps, obj, opts);
    },
  };

  async function applyObject(
    wctx: WriteCtx, r: ServedResource, t: Target, name: string, body: unknown, force: boolean,
  ): Promise<{ obj: KubeObject; created: boolean }> {
    const manager = wctx.fieldManager;
    if (!manager) throw badRequest('PATCH /apply requires fieldManager to be set');
    checkAppliedType(r, body);
    const applied = checkBody(r, body, ns(r, t));
    if (applied.metadata.name && applied.metadata.name !== name) {
      throw badRequest(`the name of the object (${applied.metadata.name}) does not match the ` +
        `name on the URL (${name})`);
    }
    applied.metadata.name = name;
    const inner: WriteCtx = { ...wctx, fieldManager: undefined };
    const input = { applied, manager, force, subresource: t.subresource };
    try {
      const out = await guaranteedUpdate(deps, inner, r, ns(r, t), name, (live) => {
        const o = serverSideApply({ ...input, live, now: deps.now() });
        delete o.metadata.resourceVersion;
        return o;
      });
      return { obj: out.obj, created: false };
    } catch (e) {
      if (!isKdpError(e, 'KDP_NOT_FOUND') || t.subresource) throw e;
    }
    const fresh = serverSideApply({ ...input, live: undefined, now: deps.now() });
    const obj = checkBody(r, fresh, ns(r, t));
    return { obj: await createObject(deps, inner, r, obj), created: true };
  }

  return svc;
}
