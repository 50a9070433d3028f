// The Node authorizer's relationships, as upstream's authorizer graph
// (plugin/pkg/auth/authorizer/node/graph.go) reduced to what kdp stores: a pod bound to a node
// relates the node to the pod and to the Secrets, ConfigMaps, PersistentVolumeClaims and the
// ServiceAccount the pod refers to (podutil.VisitPodSecretNames / VisitPodConfigmapNames).
// Each object keeps a count per node, so one pod going leaves what another still refers to.

import type { KubeObject } from '../../client/types.js';

/** `pv` is never filled (kdp serves no PersistentVolumes): reads of them are refused. */
export type VertexType = 'pod' | 'secret' | 'configmap' | 'pvc' | 'pv' | 'serviceaccount';

/** What the node authorizer asks. */
export interface NodeRelations {
  /** Whether an object of `type` at namespace/name is related to node `nodeName`. */
  hasPath(nodeName: string, type: VertexType, namespace: string, name: string): boolean;
}

type Ref = readonly [VertexType, string];

// The loosely typed pod fields the visitors read (any of them may be absent or malformed).
type Loose = Record<string, any>;

const asList = (v: unknown): Loose[] =>
  Array.isArray(v) ? v.filter((x) => x !== null && typeof x === 'object') : [];
const asName = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;

const SECRET_REF_VOLUMES = ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi',
  'storageos'];

function containers(spec: Loose): Loose[] {
  return [...asList(spec.initContainers), ...asList(spec.containers),
    ...asList(spec.ephemeralContainers)];
}

/** The names of the objects `pod` refers to, by type (upstream's visitors, all containers). */
export function podReferences(pod: KubeObject): Ref[] {
  const spec = ((pod as Loose).spec ?? {}) as Loose;
  const refs: Ref[] = [];
  const add = (type: VertexType, name: unknown) => {
    const n = asName(name);
    if (n) refs.push([type, n]);
  };
  for (const s of asList(spec.imagePullSecrets)) add('secret', s.name);
  for (const c of containers(spec)) {
    for (const e of asList(c.envFrom)) {
      add('secret', e.secretRef?.name);
      add('configmap', e.configMapRef?.name);
    }
    for (const e of asList(c.env)) {
      add('secret', e.valueFrom?.secretKeyRef?.name);
      add('configmap', e.valueFrom?.configMapKeyRef?.name);
    }
  }
  for (const v of asList(spec.volumes)) {
    add('secret', v.secret?.secretName);
    add('secret', v.azureFile?.secretName);
    add('secret', v.csi?.nodePublishSecretRef?.name);
    for (const k of SECRET_REF_VOLUMES) add('secret', v[k]?.secretRef?.name);
    add('configmap', v.configMap?.name);
    for (const s of asList(v.projected?.sources)) {
      add('secret', s.secret?.name);
      add('configmap', s.configMap?.name);
    }
    add('pvc', v.persistentVolumeClaim?.claimName);
    // A generic ephemeral volume's claim is named <pod>-<volume>.
    if (v.ephemeral && asName(v.name)) add('pvc', `${pod.metadata.name}-${v.name}`);
  }
  add('serviceaccount', spec.serviceAccountName);
  return refs;
}

const vertexKey = (type: VertexType, namespace: string, name: string) =>
  `${type}/${namespace}/${name}`;

/** The graph: pods by namespace/name and, per related object, how many pods tie it to each
 *  node. Not thread-shared; the store feed is its only writer. */
export class NodeGraph implements NodeRelations {
  private readonly pods = new Map<string, { node: string; keys: string[] }>();
  private readonly edges = new Map<string, Map<string, number>>();

  /** Adds or replaces a pod; a pod without spec.nodeName relates nothing. */
  setPod(pod: KubeObject): void {
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    this.deletePod(ns, name);
    const node = asName((pod as Loose).spec?.nodeName);
    if (!node || name === '') return;
    const keys = [vertexKey('pod', ns, name),
      ...podReferences(pod).map(([t, n]) => vertexKey(t, ns, n))];
    for (const k of keys) {
      let byNode = this.edges.get(k);
      if (!byNode) this.edges.set(k, (byNode = new Map()));
      byNode.set(node, (byNode.get(node) ?? 0) + 1);
    }
    this.pods.set(`${ns}/${name}`, { node, keys });
  }

  deletePod(namespace: string, name: string): void {
    const id = `${namespace}/${name}`;
    const entry = this.pods.get(id);
    if (!entry) return;
    this.pods.delete(id);
    for (const k of entry.keys) {
      const byNode = this.edges.get(k);
      if (!byNode) continue;
      const n = (byNode.get(entry.node) ?? 0) - 1;
      if (n > 0) byNode.set(entry.node, n);
      else byNode.delete(entry.node);
      if (byNode.size === 0) this.edges.delete(k);
    }
  }

  clear(): void {
    this.pods.clear();
    this.edges.clear();
  }

  hasPath(nodeName: string, type: VertexType, namespace: string, name: string): boolean {
    return (this.edges.get(vertexKey(type, namespace, name))?.get(nodeName) ?? 0) > 0;
  }

  /** Pods indexed (for tests and status). */
  get size(): number {
    return this.pods.size;
  }
}
