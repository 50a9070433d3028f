// The one way components talk to the API server (hub and spoke). Two implementations with the
// same semantics: in-process (direct calls into the API server's request pipeline, including
// authorization and admission) and HTTP (the Kubernetes REST API). Errors are KdpError with the
// code the API server would answer (KDP_NOT_FOUND, KDP_CONFLICT, KDP_GONE, ...).

/** Which resource collection a call addresses. `group` is '' for the core API. */
export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  /** Plural lower-case resource name, e.g. `pods`, `endpointslices`. */
  readonly resource: string;
  /** Required for namespaced resources (except cross-namespace list/watch); absent otherwise. */
  readonly namespace?: string;
}

// Objects are the API's (src/api/object.ts); the client contract carries them.
import type { KubeObject, ObjectMetaLike } from '../api/object.js';

export type { KubeObject, ObjectMetaLike };

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  /** '' or absent: most recent; '0': any; a number: at that revision (semantics as upstream). */
  readonly resourceVersion?: string;
}

export interface WatchOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Start after this resourceVersion; '0' or absent sends synthetic ADDED events first. */
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  readonly type: WatchEventType;
  /** For ERROR, a `Status` object (e.g. code 410 reason Expired). */
  readonly object: T;
}

export interface WatchHandle {
  /** Stops the watch; `onClose` is not called after an explicit stop. Idempotent. */
  stop(): void;
}

export interface WatchHandlers<T extends KubeObject = KubeObject> {
  onEvent(ev: WatchEvent<T>): void;
  /** The stream ended from the server side (or failed); callers re-watch or relist. */
  onClose?(err?: Error): void;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface WriteOptions {
  readonly dryRun?: boolean;
  readonly fieldManager?: string;
  /** 'status' | 'scale' | 'binding' | ... */
  readonly subresource?: string;
}

export interface PatchOptions extends WriteOptions {
  /** For server-side apply. */
  readonly force?: boolean;
}

export interface DeleteOptions {
  readonly gracePeriodSeconds?: number;
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  readonly preconditions?: { uid?: string; resourceVersion?: string };
  readonly dryRun?: boolean;
}

/**
 * A Kubernetes API client. All methods are async and reject with KdpError.
 * `create` of a subresource (e.g. `pods/binding`) passes the parent's name in `opts.name`.
 */
export interface Client {
  get<T extends KubeObject = KubeObject>(ref: ResourceRef, name: string, opts?: { subresource?: string }): Promise<T>;
  list<T extends KubeObject = KubeObject>(ref: ResourceRef, opts?: ListOptions): Promise<KubeList<T>>;
  create<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: KubeObject,
    opts?: WriteOptions & { name?: string },
  ): Promise<T>;
  update<T extends KubeObject = KubeObject>(ref: ResourceRef, obj: KubeObject, opts?: WriteOptions): Promise<T>;
  patch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    name: string,
    type: PatchType,
    patch: unknown,
    opts?: PatchOptions,
  ): Promise<T>;
  /** Resolves to the object as deleted (or as marked for graceful deletion). */
  delete<T extends KubeObject = KubeObject>(ref: ResourceRef, name: string, opts?: DeleteOptions): Promise<T>;
  watch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    opts: WatchOptions,
    handlers: WatchHandlers<T>,
  ): WatchHandle;
}
