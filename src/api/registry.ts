// The resource registry (upstream's scheme + RESTMapper, as data): which kinds kdp serves, under
// which group/version/plural, namespaced or not, with which short names, categories, verbs and
// subresources. The API server builds discovery (`/api`, `/apis`, aggregated discovery) from it;
// the CLI and loader resolve `kind`, `po`, `deploy.apps` through it. Values match upstream v1.33
// discovery output.

export interface SubresourceInfo {
  /** `status`, `scale`, `binding`, `log`, `eviction`, `finalize`. */
  readonly name: string;
  /** Kind of the subresource's body (`Pod` for status, `Scale` for scale, `Binding`...). */
  readonly kind: string;
  /** Group/version of the body kind when it differs from the parent's (`autoscaling`/`v1`). */
  readonly group?: string;
  readonly version?: string;
  readonly verbs: readonly string[];
}

export interface ResourceInfo {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  /** Plural lower-case name, as in URLs: `pods`, `endpointslices`. */
  readonly resource: string;
  readonly singularName: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  readonly subresources: readonly SubresourceInfo[];
}

const CRUD = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const GPU = ['get', 'patch', 'update'];

interface Spec {
  g: string; v: string; kind: string; res: string; ns: boolean;
  short?: string[]; cat?: string[]; sub?: SubresourceInfo[]; verbs?: string[];
}

function statusOf(kind: string): SubresourceInfo {
  return { name: 'status', kind, verbs: GPU };
}

/** The verbs of the `proxy` subresources (upstream: every HTTP method maps to one). */
const PROXY = ['create', 'delete', 'get', 'patch', 'update'];

const SCALE: SubresourceInfo = {
  name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: GPU,
};

const SPECS: readonly Spec[] = [
  { g: '', v: 'v1', kind: 'Namespace', res: 'namespaces', ns: false, short: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    sub: [{ name: 'finalize', kind: 'Namespace', verbs: ['update'] }, statusOf('Namespace')] },
  { g: '', v: 'v1', kind: 'Node', res: 'nodes', ns: false, short: ['no'],
    sub: [{ name: 'proxy', kind: 'NodeProxyOptions', verbs: PROXY }, statusOf('Node')] },
  { g: '', v: 'v1', kind: 'Pod', res: 'pods', ns: true, short: ['po'], cat: ['all'],
    sub: [
      { name: 'binding', kind: 'Binding', verbs: ['create'] },
      { name: 'ephemeralcontainers', kind: 'Pod', verbs: GPU },
      { name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
      { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
      { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
      { name: 'log', kind: 'Pod', verbs: ['get'] },
      { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
      { name: 'proxy', kind: 'PodProxyOptions', verbs: PROXY },
      statusOf('Pod'),
    ] },
  { g: '', v: 'v1', kind: 'Service', res: 'services', ns: true, short: ['svc'], cat: ['all'],
    sub: [{ name: 'proxy', kind: 'ServiceProxyOptions', verbs: PROXY }, statusOf('Service')] },
  { g: '', v: 'v1', kind: 'Endpoints', res: 'endpoints', ns: true, short: ['ep'] },
  { g: '', v: 'v1', kind: 'Event', res: 'events', ns: true, short: ['ev'] },
  { g: '', v: 'v1', kind: 'ConfigMap', res: 'configmaps', ns: true, short: ['cm'] },
  { g: '', v: 'v1', kind: 'Secret', res: 'secrets', ns: true },
  { g: '', v: 'v1', kind: 'ServiceAccount', res: 'serviceaccounts', ns: true, short: ['sa'],
    sub: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1',
      verbs: ['create'] }] },
  { g: 'apps', v: 'v1', kind: 'Deployment', res: 'deployments', ns: true, short: ['deploy'],
    cat: ['all'], sub: [SCALE, statusOf('Deployment')] },
  { g: 'apps', v: 'v1', kind: 'ReplicaSet', res: 'replicasets', ns: true, short: ['rs'],
    cat: ['all'], sub: [SCALE, statusOf('ReplicaSet')] },
  { g: 'apps', v: 'v1', kind: 'DaemonSet', res: 'daemonsets', ns: true, short: ['ds'],
    cat: ['all'], sub: [statusOf('DaemonSet')] },
  { g: 'batch', v: 'v1', kind: 'Job', res: 'jobs', ns: true, cat: ['all'],
    sub: [statusOf('Job')] },
  { g: 'apps', v: 'v1', kind: 'StatefulSet', res: 'statefulsets', ns: true, short: ['sts'],
    cat: ['all'], sub: [SCALE, statusOf('StatefulSet')] },
  { g: 'batch', v: 'v1', kind: 'CronJob', res: 'cronjobs', ns: true, short: ['cj'],
    cat: ['all'], sub: [statusOf('CronJob')] },
  { g: 'apps', v: 'v1', kind: 'ControllerRevision', res: 'controllerrevisions', ns: true },
  { g: 'discovery.k8s.io', v: 'v1', kind: 'EndpointSlice', res: 'endpointslices', ns: true },
  { g: 'coordination.k8s.io', v: 'v1', kind: 'Lease', res: 'leases', ns: true },
  { g: 'networking.k8s.io', v: 'v1', kind: 'ServiceCIDR', res: 'servicecidrs', ns: false,
    sub: [statusOf('ServiceCIDR')] },
  { g: 'policy', v: 'v1', kind: 'PodDisruptionBudget', res: 'poddisruptionbudgets', ns: true,
    short: ['pdb'], sub: [statusOf('PodDisruptionBudget')] },
  { g: 'networking.k8s.io', v: 'v1', kind: 'NetworkPolicy', res: 'networkpolicies', ns: true,
    short: ['netpol'] },
  { g: 'certificates.k8s.io', v: 'v1', kind: 'CertificateSigningRequest',
    res: 'certificatesigningrequests', ns: false, short: ['csr'],
    sub: [{ name: 'approval', kind: 'CertificateSigningRequest', verbs: GPU },
      statusOf('CertificateSigningRequest')] },
  { g: 'rbac.authorization.k8s.io', v: 'v1', kind: 'Role', res: 'roles', ns: true },
  { g: 'rbac.authorization.k8s.io', v: 'v1', kind: 'ClusterRole', res: 'clusterroles',
    ns: false },
  { g: 'rbac.authorization.k8s.io', v: 'v1', kind: 'RoleBinding', res: 'rolebindings',
    ns: true },
  { g: 'rbac.authorization.k8s.io', v: 'v1', kind: 'ClusterRoleBinding',
    res: 'clusterrolebindings', ns: false },
];

/** Every resource kdp serves, in discovery order (core first, then groups). */
export const BUILTIN_RESOURCES: readonly ResourceInfo[] = SPECS.map((s) => ({
  group: s.g,
  version: s.v,
  kind: s.kind,
  listKind: `${s.kind}List`,
  resource: s.res,
  singularName: s.kind.toLowerCase(),
  namespaced: s.ns,
  shortNames: s.short ?? [],
  categories: s.cat ?? [],
  verbs: s.verbs ?? CRUD,
  subresources: s.sub ?? [],
}));

/** `v1` for the core group, `apps/v1` otherwise. */
export function apiVersionOf(r: { group: string; version: string }): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** Splits `apps/v1` → {group:'apps', version:'v1'}; `v1` → {group:'', version:'v1'}. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** Lookups over a set of resources. All lookups are case-insensitive on names. */
export interface ResourceRegistry {
  all(): readonly ResourceInfo[];
  /** The `/apis` groups with their versions, in discovery order ('' is the core group). */
  groups(): ReadonlyArray<{ group: string; versions: readonly string[] }>;
  byResource(group: string, version: string, resource: string): ResourceInfo | undefined;
  /** By `apiVersion` + `kind` (as written in manifests). */
  byKind(apiVersion: string, kind: string): ResourceInfo | undefined;
  /** By kind alone (first match across groups); for loaders that lack a version. */
  byKindName(kind: string): ResourceInfo | undefined;
  byShortName(shortName: string): ResourceInfo | undefined;
  /**
   * Resolves what a user types (`po`, `pods`, `pod`, `Pod`, `deploy.apps`,
   * `deployments.v1.apps`) to a resource, as kubectl's RESTMapper does.
   */
  resolve(name: string): ResourceInfo | undefined;
  /** Resources in a category (`all`). */
  inCategory(category: string): readonly ResourceInfo[];
}

function matchesName(r: ResourceInfo, n: string): boolean {
  return r.resource === n || r.singularName === n || r.kind.toLowerCase() === n
    || r.shortNames.includes(n);
}

/** Builds lookups over `resources` (default: the built-in set). */
export function buildRegistry(
  resources: readonly ResourceInfo[] = BUILTIN_RESOURCES,
): ResourceRegistry {
  const byGVR = new Map(resources.map((r) => [`${r.group}/${r.version}/${r.resource}`, r]));
  const byGVK = new Map(resources.map((r) => [`${apiVersionOf(r)}|${r.kind.toLowerCase()}`, r]));
  const resolveIn = (n: string, group?: string, version?: string): ResourceInfo | undefined =>
    resources.find((r) => matchesName(r, n) && (group === undefined || r.group === group)
      && (version === undefined || r.version === version));
  return {
    all: () => resources,
    groups: () => {
      const out: Array<{ group: string; versions: string[] }> = [];
      for (const r of resources) {
        const g = out.find((x) => x.group === r.group);
        if (!g) out.push({ group: r.group, versions: [r.version] });
        else if (!g.versions.includes(r.version)) g.versions.push(r.version);
      }
      return out;
    },
    byResource: (group, version, resource) =>
      byGVR.get(`${group}/${version}/${resource.toLowerCase()}`),
    byKind: (apiVersion, kind) => byGVK.get(`${apiVersion}|${kind.toLowerCase()}`),
    byKindName: (kind) => resources.find((r) => r.kind.toLowerCase() === kind.toLowerCase()),
    byShortName: (s) => resources.find((r) => r.shortNames.includes(s.toLowerCase())),
    resolve: (name) => {
      const n = name.toLowerCase();
      const direct = resolveIn(n);
      if (direct) return direct;
      const parts = n.split('.');
      if (parts.length < 2) return undefined;
      const head = parts[0]!;
      // `deployments.v1.apps` (resource.version.group) before `deploy.apps` (resource.group).
      if (parts.length >= 3) {
        const hit = resolveIn(head, parts.slice(2).join('.'), parts[1]);
        if (hit) return hit;
      }
      const rest = parts.slice(1).join('.');
      return resolveIn(head, rest) ?? resources.find((r) => matchesName(r, head)
        && r.group.startsWith(`${rest}.`));
    },
    inCategory: (c) => resources.filter((r) => r.categories.includes(c)),
  };
}
