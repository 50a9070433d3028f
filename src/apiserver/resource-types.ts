// The API server's view of one served resource: enough to route, store, discover and print it.
// Built from the api package's registry by `resources.ts`; everything in apiserver uses this.

export interface ServedSubresource {
  /** e.g. `status`, `scale`, `binding`, `log`. */
  readonly name: string;
  /** Kind answered by the subresource (`Scale` for scale, the parent's kind for status). */
  readonly kind: string;
  readonly group: string;
  readonly version: string;
  readonly verbs: readonly string[];
}

export interface ServedResource {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural, lower case: `pods`. */
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly subresources: readonly ServedSubresource[];
}

/** `apps/v1` or `v1` for the core group. */
export function groupVersion(r: { group: string; version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** `deployments.apps` or `pods`: how upstream names a resource in messages. */
export function qualifiedResource(r: { group: string; resource: string }): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

/** Lookup of served resources by group/version/resource. */
export interface ResourceCatalog {
  readonly all: readonly ServedResource[];
  find(group: string, version: string, resource: string): ServedResource | undefined;
  /** Group names in discovery order ('' first). */
  groups(): string[];
}

export function buildResourceCatalog(list: readonly ServedResource[]): ResourceCatalog {
  const byKey = new Map<string, ServedResource>();
  for (const r of list) byKey.set(`${r.group}/${r.version}/${r.resource}`, r);
  return {
    all: list,
    find: (g, v, res) => byKey.get(`${g}/${v}/${res}`),
    groups: () => [...new Set(list.map((r) => r.group))],
  };
}
