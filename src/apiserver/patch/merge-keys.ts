// patchMergeKey of the list fields in k8s.io/api (core/v1, apps/v1, meta/v1), by field name.
// Used by strategic merge patch and by the managed-fields field sets. A key only applies when
// every element is an object carrying it (e.g. EndpointSlice `addresses` is a string list).

const MERGE_KEYS = new Map<string, readonly string[]>(Object.entries({
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
}));

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
  const cands = MERGE_KEYS.get(field);
  if (!cands) return undefined;
  let any = false;
  const ok = cands.map(() => true);
  for (const list of lists) {
    for (const e of list) {
      if (isObj(e) && Object.keys(e).every((k) => k.startsWith('$'))) continue; // directive only
      any = true;
      for (let i = 0; i < cands.length; i++) {
        if (ok[i] && !(isObj(e) && e[cands[i]!] !== undefined)) ok[i] = false;
      }
    }
  }
  if (!any) return cands[0];
  const i = ok.indexOf(true);
  return i < 0 ? undefined : cands[i];
}
