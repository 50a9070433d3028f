// patchMergeKey of the list fields in k8s.io/api (core/v1, apps/v1, meta/v1), by field name.
// Used by strategic merge patch and by the managed-fields field sets. A key only applies when
// every element is an object carrying it (e.g. EndpointSlice `addresses` is a string list).

const MERGE_KEYS: Record<string, readonly string[]> = {
  containers: ['name'],
  initContainers: ['name'],
  ephemeralContainers: ['name'],
  ports: ['containerPort', 'port'],
  env: ['name'],
  volumes: ['name'],
  volumeMounts: ['mountPath'],
  volumeDevices: ['devicePath'],
  imagePullSecrets: ['name'],
  hostAliases: ['ip'],
  podIPs: ['ip'],
  hostIPs: ['ip'],
  topologySpreadConstraints: ['topologyKey'],
  schedulingGates: ['name'],
  resourceClaims: ['name'],
  conditions: ['type'],
  addresses: ['type'],
  ownerReferences: ['uid'],
};

/** Primitive lists merged as sets (patchStrategy merge on a []string). */
const SET_LISTS = new Set(['finalizers', 'podCIDRs']);

/** Fields whose map strategy is `retainKeys` (SMP `$retainKeys` directive is honoured anyway). */
export function isSetList(field: string): boolean {
  return SET_LISTS.has(field);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** The merge key for `field` given the elements seen on both sides, or undefined. */
export function mergeKeyFor(field: string, ...lists: unknown[][]): string | undefined {
  const cands = MERGE_KEYS[field];
  if (!cands) return undefined;
  const directiveOnly = (e: unknown) => isObj(e) && Object.keys(e).every((k) => k.startsWith('$'));
  const items = lists.flat().filter((e) => !directiveOnly(e));
  if (!items.length) return cands[0];
  return cands.find((k) => items.every((e) => isObj(e) && e[k] !== undefined));
}
