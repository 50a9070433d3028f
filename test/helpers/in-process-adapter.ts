// Stand-in for src/client/in-process.ts until it exists: maps Client calls onto the API service.

import type { ApiService, Target } from '../../src/apiserver/service.js';
import type { UserInfo } from '../../src/apiserver/pipeline-types.js';
import type { Client, KubeObject, ResourceRef, WatchHandle } from '../../src/client/types.js';

export function inProcessAdapter(svc: ApiService, user: UserInfo): Client {
  const ctx = { user };
  const t = (r: ResourceRef, name?: string, subresource?: string): Target =>
    ({ ...r, ...(name ? { name } : {}), ...(subresource ? { subresource } : {}) });
  const c: Client = {
    get: async (r, name, o) => await svc.get(ctx, t(r, name, o?.subresource)) as never,
    list: async (r, o) => await svc.list(ctx, t(r), o ?? {}) as never,
    create: async (r, obj, o) => await svc.create(ctx, t(r, o?.name, o?.subresource), obj,
      { dryRun: o?.dryRun, fieldManager: o?.fieldManager }) as never,
    update: async (r, obj, o) => await svc.update(ctx, t(r, obj.metadata.name, o?.subresource),
      obj, { dryRun: o?.dryRun, fieldManager: o?.fieldManager }) as never,
    patch: async (r, name, type, body, o) => (await svc.patch(ctx, t(r, name, o?.subresource),
      type, body, { dryRun: o?.dryRun, fieldManager: o?.fieldManager, force: o?.force })).obj as never,
    delete: async (r, name, o) => await svc.delete(ctx, t(r, name), o ?? {}) as never,
    watch(r, o, h) {
      let stopped = false;
      let inner: WatchHandle | undefined;
      svc.watch(ctx, t(r), o, {
        onEvent: (ev) => { if (!stopped) h.onEvent(ev as never); },
        onClose: (err) => { if (!stopped) h.onClose?.(err); },
      }).then((w) => { inner = w; if (stopped) w.stop(); },
        (err) => { if (!stopped) h.onClose?.(err as Error); });
      return { stop() { stopped = true; inner?.stop(); } };
    },
  };
  return c;
}

export type { KubeObject };
