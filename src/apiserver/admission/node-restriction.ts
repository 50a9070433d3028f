// NodeRestriction, as upstream's plugin/pkg/admission/noderestriction: a node identity
// (`system:node:<name>` in `system:nodes`) may create or change only its own Node (not its
// taints, nor kubernetes.io/k8s.io labels outside the kubelet's set, nor node-restriction
// labels), update the status only of pods bound to it (not their labels), create only mirror
// pods bound to and owned by itself that refer to no other object, delete only its own pods,
// and touch only its own Lease in kube-node-lease. Events are left to RBAC's rules, as upstream.
// Refusals are upstream's `admission.NewForbidden` wording.

import type { KubeObject } from '../../client/types.js';
import { kdpError, type KdpError } from '../../errors.js';
import { nodeIdentity, NODE_LEASE_NAMESPACE } from '../authz/node.js';
import { podReferences } from '../authz/node-graph.js';
import type { AdmissionPlugin, AdmissionRequest } from '../pipeline-types.js';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** admission.NewForbidden: `<resource>[.<group>] ["<name>"] is forbidden: <why>`. */
export function forbidden(req: AdmissionRequest, why: string): KdpError {
  const name = req.name || req.object?.metadata?.name || '';
  const what = req.group ? `${req.resource}.${req.group}` : req.resource;
  const head = name ? `${what} ${JSON.stringify(name)}` : what;
  return kdpError('KDP_FORBIDDEN', `${head} is forbidden: ${why}`, {
    ...(name ? { name } : {}), ...(req.group ? { group: req.group } : {}), kind: req.resource,
  });
}

type Loose = Record<string, any>;
const specOf = (o: KubeObject | undefined): Loose => ((o as Loose | undefined)?.spec ?? {});

// kubeletapis.IsKubeletLabel: the kubernetes.io/k8s.io labels a kubelet may set on its Node.
const KUBELET_LABELS = new Set(['kubernetes.io/hostname', 'kubernetes.io/arch', 'kubernetes.io/os',
  'beta.kubernetes.io/arch', 'beta.kubernetes.io/os', 'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type', 'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone', 'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone']);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const labelNamespace = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inDomain = (ns: string, d: string) => ns === d || ns.endsWith(`.${d}`);

function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((d) => inDomain(ns, d));
}

/** getForbiddenLabels over the keys that differ between `a` and `b`, sorted. */
function forbiddenLabels(a: Record<string, string> = {}, b: Record<string, string> = {}):
  string[] {
  const keys = new Set<string>();
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) keys.add(k);
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) keys.add(k);
  return [...keys].filter((k) => {
    const ns = labelNamespace(k);
    if (inDomain(ns, 'node-restriction.kubernetes.io')) return true;
    const kube = inDomain(ns, 'kubernetes.io') || inDomain(ns, 'k8s.io');
    return kube && !isKubeletLabel(k);
  }).sort();
}

const sameJson = (a: unknown, b: unknown) =>
  JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

function admitNode(node: string, req: AdmissionRequest): void {
  const name = req.name || req.object?.metadata?.name || '';
  if (name !== node) throw forbidden(req, `node "${node}" is not allowed to modify node "${name}"`);
  const obj = req.object;
  if (req.operation === 'CREATE' && obj) {
    if (specOf(obj).configSource != null) {
      throw forbidden(req, `node "${node}" is not allowed to create pods with a non-nil ` +
        'configSource');
    }
    const bad = forbiddenLabels(obj.metadata.labels, undefined);
    if (bad.length) {
      throw forbidden(req, `node "${node}" is not allowed to set the following labels: ` +
        bad.join(', '));
    }
  }
  if (req.operation === 'UPDATE' && obj && req.oldObject) {
    const cfg = specOf(obj).configSource;
    if (cfg != null && !sameJson(cfg, specOf(req.oldObject).configSource)) {
      throw forbidden(req, `node "${node}" is not allowed to update configSource to a new ` +
        'non-nil configSource');
    }
    if (!sameJson(specOf(obj).taints ?? [], specOf(req.oldObject).taints ?? [])) {
      throw forbidden(req, `node "${node}" is not allowed to modify taints`);
    }
    const bad = forbiddenLabels(obj.metadata.labels, req.oldObject.metadata.labels);
    if (bad.length) throw forbidden(req, `is not allowed to modify labels: ${bad.join(', ')}`);
  }
}

/** Reads the node's stored Node (for the mirror pod owner's UID). */
export type NodeGetter = (name: string) => Promise<KubeObject | undefined>;

async function admitMirrorPod(node: string, req: AdmissionRequest, getNode: NodeGetter):
  Promise<void> {
  const pod = req.object;
  if (!pod) throw forbidden(req, 'unexpected type <nil>');
  if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] === undefined) {
    throw forbidden(req, `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node ` +
      `"${node}" can only create mirror pods`);
  }
  const spec = specOf(pod);
  if (spec.nodeName !== node) {
    throw forbidden(req, `node "${node}" can only create pods with spec.nodeName set to itself`);
  }
  const owners = pod.metadata.ownerReferences ?? [];
  if (owners.length > 1) {
    throw forbidden(req, `node "${node}" can only create pods with a single owner reference ` +
      'set to itself');
  }
  const o = owners[0];
  if (!o || o.apiVersion !== 'v1' || o.kind !== 'Node' || o.name !== node) {
    throw forbidden(req, `node "${node}" can only create pods with an owner reference set to ` +
      'itself');
  }
  if (o.controller !== true) {
    throw forbidden(req, `node "${node}" can only create pods with a controller owner ` +
      'reference set to itself');
  }
  if (o.blockOwnerDeletion === true) {
    throw forbidden(req, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
  }
  const stored = await getNode(node);
  if (!stored) {
    throw kdpError('KDP_NOT_FOUND', `nodes ${JSON.stringify(node)} not found`,
      { name: node, kind: 'nodes' });
  }
  if (o.uid !== stored.metadata.uid) {
    throw forbidden(req, `node ${node} UID mismatch: expected ${o.uid ?? ''} got ` +
      `${stored.metadata.uid ?? ''}`);
  }
  if (spec.serviceAccountName) {
    throw forbidden(req, `node "${node}" can not create pods that reference a service account`);
  }
  const refs = podReferences(pod);
  for (const [type, word] of [['secret', 'secrets'], ['configmap', 'configmaps'],
    ['pvc', 'persistentvolumeclaims']] as const) {
    if (refs.some(([t]) => t === type)) {
      throw forbidden(req, `node "${node}" can not create pods that reference ${word}`);
    }
  }
}

async function admitPod(node: string, req: AdmissionRequest, getNode: NodeGetter):
  Promise<void> {
  switch (req.subresource ?? '') {
    case '':
      if (req.operation === 'CREATE') return admitMirrorPod(node, req, getNode);
      if (req.operation === 'DELETE') {
        // The stored pod (the delete path reads it; absent, the delete answers 404 itself).
        if (req.oldObject && specOf(req.oldObject).nodeName !== node) {
          throw forbidden(req, `node "${node}" can only delete pods with spec.nodeName set to ` +
            'itself');
        }
        return;
      }
      throw forbidden(req, `unexpected operation "${req.operation}", node "${node}" can only ` +
        'create and delete mirror pods');
    case 'status':
      if (req.operation !== 'UPDATE') {
        throw forbidden(req, `unexpected operation "${req.operation}"`);
      }
      if (specOf(req.oldObject).nodeName !== node) {
        throw forbidden(req, `node "${node}" can only update pod status for pods with ` +
          'spec.nodeName set to itself');
      }
      if (!sameJson(req.object?.metadata.labels ?? {}, req.oldObject?.metadata.labels ?? {})) {
        throw forbidden(req, `node "${node}" cannot update labels through pod status`);
      }
      return;
    case 'eviction':
      if (req.operation !== 'CREATE') throw forbidden(req, `unexpected operation ${req.operation}`);
      if (req.oldObject && specOf(req.oldObject).nodeName !== node) {
        throw forbidden(req, `node ${node} can only evict pods with spec.nodeName set to itself`);
      }
      return;
    default:
      throw forbidden(req, `unexpected pod subresource "${req.subresource}", only 'status' and ` +
        '\'eviction\' are allowed');
  }
}

function admitLease(node: string, req: AdmissionRequest): void {
  if (req.namespace !== NODE_LEASE_NAMESPACE) {
    throw forbidden(req,
      `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
  }
  const name = req.operation === 'CREATE' ? req.object?.metadata?.name : req.name;
  if (name !== node) {
    throw forbidden(req, 'can only access node lease with the same name as the requesting node');
  }
}

export function buildNodeRestrictionPlugin(getNode: NodeGetter): AdmissionPlugin {
  return {
    name: 'NodeRestriction',
    async admit(req) {
      if (req.operation === 'CONNECT') return;
      const node = nodeIdentity(req.user);
      if (node === undefined) return;
      if (node === '') {
        throw forbidden(req, `could not determine node from user "${req.user.name}"`);
      }
      const gr = `${req.resource}.${req.group}`;
      if (gr === 'pods.') await admitPod(node, req, getNode);
      else if (gr === 'nodes.') admitNode(node, req);
      else if (gr === 'persistentvolumeclaims.') {
        // Upstream also limits a status update to capacity and conditions; kdp's nodes report
        // no PVC status, so only the subresource is checked.
        if (req.subresource !== 'status') throw forbidden(req, 'may only update PVC status');
      } else if (gr === 'leases.coordination.k8s.io') admitLease(node, req);
    },
  };
}
