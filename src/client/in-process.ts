// The in-process client: direct calls into the API server's service layer (authorization,
// admission, defaulting, validation, storage), so components in the same process get exactly
// the semantics HTTP clients get, without serialising requests.

import type { ApiService, Target } from '../apiserver/service.js';
import type { UserInfo } from '../apiserver/pipeline-types.js';
import type {
  Client, DeleteOptions, KubeList, KubeObject, ListOptions, PatchOptions, PatchType, ResourceRef,
  WatchHandle, WatchHandlers, WatchOptions, WriteOptions,
} from './types.js';

function target(ref: ResourceRef, name?: string, subresource?: string): Target {
  return { group: ref.group, version: ref.version, resource: ref.resource,
    namespace: ref.namespace, name, subresource };
}

/** Results are deep copies: callers may mutate them freely. */
function copy<T>(v: T): T {
  return structuredClone(v);
}

export function buildInProcessClient(service: ApiService, user: UserInfo): Client {
  const ctx = { user };
  return {
    async get<T extends KubeObject>(
      ref: ResourceRef, name: string, opts?: { subresource?: string },
    ) {
      return copy(await service.get(ctx, target(ref, name, opts?.subresource))) as T;
    },
    async list<T extends KubeObject>(ref: ResourceRef, opts: ListOptions = {}) {
      return copy(await service.list(ctx, target(ref), opts)) as KubeList<T>;
    },
    async create<T extends KubeObject>(ref: ResourceRef, obj: KubeObject,
      opts: WriteOptions & { name?: string } = {}) {
      const t = target(ref, opts.subresource ? (opts.name ?? obj.metadata?.name) : undefined,
        opts.subresource);
      return copy(await service.create(ctx, t, copy(obj), opts)) as T;
    },
    async update<T extends KubeObject>(ref: ResourceRef, obj: KubeObject, opts: WriteOptions = {}) {
      const t = target(ref, obj.metadata?.name, opts.subresource);
      return copy((await service.update(ctx, t, copy(obj), opts)).obj) as T;
    },
    async patch<T extends KubeObject>(ref: ResourceRef, name: string, type: PatchType,
      patch: unknown, opts: PatchOptions = {}) {
      const t = target(ref, name, opts.subresource);
      const out = await service.patch(ctx, t, type, copy(patch), opts);
      return copy(out.obj) as T;
    },
    async delete<T extends KubeObject>(ref: ResourceRef, name: string, opts: DeleteOptions = {}) {
      return copy(await service.delete(ctx, target(ref, name), opts)) as T;
    },
    watch<T extends KubeObject>(ref: ResourceRef, opts: WatchOptions,
      handlers: WatchHandlers<T>): WatchHandle {
      let stopped = false;
      let handle: WatchHandle | undefined;
      service.watch(ctx, target(ref), opts, {
        // Watch objects are decoded afresh for each watcher, so no copy is needed.
        onEvent: (ev) => { if (!stopped) handlers.onEvent(ev as never); },
        onClose: (err) => { if (!stopped) { stopped = true; handlers.onClose?.(err); } },
      }).then((h) => {
        handle = h;
        if (stopped) h.stop();
      }, (err: Error) => {
        if (!stopped) { stopped = true; handlers.onClose?.(err); }
      });
      return {
        stop() {
          stopped = true;
          handle?.stop();
        },
      };
    },
  };
}
