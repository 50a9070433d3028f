// Validation entry point: `validate(obj, old?)` returns EVERY problem as upstream would report
// it (field path, CauseType reason, upstream wording), or [] when the object is valid. Call it
// after `applyDefaults` (upstream validates defaulted objects, so unset defaults are reported as
// Required). The API server turns a non-empty list into KDP_INVALID with `invalidMessage`.

import type { KubeObject } from '../object.js';
import type { Job, ObjectMeta } from '../types.js';
import { generateJobSelector } from '../defaults/workloads.js';
import { kdpError } from '../../errors.js';
import { decodeTypes } from '../schema/index.js';
import { type Cause, invalidMessage } from './field-errors.js';
import { validateObjectMetaUpdate } from './common.js';
import {
  validateEndpointSlice, validateEndpointSliceUpdate, validateEndpoints, validateLease,
  validateServiceCIDR, validateServiceCIDRUpdate,
} from './discovery.js';
import {
  validateBindingUpdate, validateClusterRole, validateClusterRoleBinding, validateConfigMap,
  validateConfigMapUpdate, validateEvent, validateNamespace, validateNode, validateNodeUpdate,
  validateRole, validateRoleBinding, validateSecret, validateSecretUpdate, validateServiceAccount,
} from './misc.js';
import { validatePod, validatePodStatusUpdate, validatePodUpdate } from './pod.js';
import { validatePodEphemeralContainersUpdate } from './ephemeral.js';
import {
  validateService, validateServiceStatusUpdate, validateServiceUpdate,
} from './service.js';
import {
  validateDaemonSet, validateDaemonSetUpdate, validateDeployment, validateDeploymentUpdate,
  validateJob, validateJobUpdate, validateReplicaSet, validateReplicaSetUpdate,
} from './workloads.js';
import {
  validateControllerRevision, validateControllerRevisionUpdate, validateCronJob,
  validateCronJobUpdate, validateStatefulSet, validateStatefulSetUpdate,
} from './statefulset-cronjob.js';

import {
  validateNetworkPolicy, validateNetworkPolicyUpdate,
} from '../../netpol/validation.js';
import { validatePodDisruptionBudget, validatePodDisruptionBudgetUpdate } from './pdb.js';
import { validateCertificateSigningRequest, validateCertificateSigningRequestUpdate } from './csr.js';

export type { Cause } from './field-errors.js';
export { invalidMessage } from './field-errors.js';

type Check = (o: never) => Cause[];
type UpdateCheck = (o: never, old: never) => Cause[];

interface KindValidation {
  readonly create: Check;
  /** Defaults to metadata-update checks plus `create`. */
  readonly update?: UpdateCheck;
}

const withMeta = (create: Check): UpdateCheck => (o: never, old: never) => [
  ...validateObjectMetaUpdate(metaOf(o), metaOf(old)),
  ...create(o),
];

/**
 * Upstream jobStrategy.Validate generates the selector (from the uid the server just assigned)
 * before validating; so does this, when the Job has a uid and no manual selector.
 */
function validateJobCreate(j: Job): Cause[] {
  if (j.metadata.uid && j.spec && j.spec.manualSelector !== true) generateJobSelector(j);
  return validateJob(j);
}

const metaOf = (o: KubeObject): ObjectMeta => (o.metadata ?? {}) as ObjectMeta;

const RBAC = 'rbac.authorization.k8s.io/v1';

const KINDS: Record<string, KindValidation> = {
  'v1|Pod': { create: validatePod, update: validatePodUpdate },
  'v1|Service': { create: validateService, update: validateServiceUpdate },
  'v1|Endpoints': { create: validateEndpoints },
  'v1|Namespace': { create: validateNamespace },
  'v1|Node': { create: validateNode, update: validateNodeUpdate },
  'v1|ConfigMap': { create: validateConfigMap, update: validateConfigMapUpdate },
  'v1|Secret': { create: validateSecret, update: validateSecretUpdate },
  'v1|ServiceAccount': { create: validateServiceAccount },
  'v1|Event': { create: validateEvent },
  'apps/v1|Deployment': { create: validateDeployment, update: validateDeploymentUpdate },
  'apps/v1|ReplicaSet': { create: validateReplicaSet, update: validateReplicaSetUpdate },
  'apps/v1|DaemonSet': { create: validateDaemonSet, update: validateDaemonSetUpdate },
  'batch/v1|Job': { create: validateJobCreate, update: validateJobUpdate },
  'apps/v1|StatefulSet': { create: validateStatefulSet, update: validateStatefulSetUpdate },
  'batch/v1|CronJob': { create: validateCronJob, update: validateCronJobUpdate },
  'apps/v1|ControllerRevision': {
    create: validateControllerRevision, update: validateControllerRevisionUpdate,
  },
  'discovery.k8s.io/v1|EndpointSlice': {
    create: validateEndpointSlice, update: validateEndpointSliceUpdate,
  },
  'coordination.k8s.io/v1|Lease': { create: validateLease },
  'networking.k8s.io/v1|ServiceCIDR': {
    create: validateServiceCIDR, update: validateServiceCIDRUpdate,
  },
  'policy/v1|PodDisruptionBudget': {
    create: validatePodDisruptionBudget, update: validatePodDisruptionBudgetUpdate,
  },
  'networking.k8s.io/v1|NetworkPolicy': {
    create: validateNetworkPolicy, update: validateNetworkPolicyUpdate,
  },
  'certificates.k8s.io/v1|CertificateSigningRequest': {
    create: validateCertificateSigningRequest, update: validateCertificateSigningRequestUpdate,
  },
  [`${RBAC}|Role`]: { create: validateRole },
  [`${RBAC}|ClusterRole`]: { create: validateClusterRole },
  [`${RBAC}|RoleBinding`]: {
    create: validateRoleBinding,
    update: (o: never, old: never) => validateBindingUpdate(o, old, true),
  },
  [`${RBAC}|ClusterRoleBinding`]: {
    create: validateClusterRoleBinding,
    update: (o: never, old: never) => validateBindingUpdate(o, old, false),
  },
};

export interface ValidateOptions {
  /** `status` validates a status-subresource write: identity metadata and status only. */
  readonly subresource?: string;
}

/** Whether kdp has validation for this apiVersion/kind. */
export function hasValidation(apiVersion: string, kind: string): boolean {
  return `${apiVersion}|${kind}` in KINDS;
}

/**
 * Validates `obj` (create) or the change `old` → `obj` (update). Unknown kinds yield [].
 * Never throws for malformed input; every problem is a cause (a value of the wrong type is the
 * one cause, FieldValueTypeInvalid). Mutations: nulls are decoded as the API server decodes
 * them (schema/decodeTypes), and creating a Job with a uid and no manual selector fills its
 * generated selector and labels, as upstream.
 */
export function validate(obj: KubeObject, old?: KubeObject, opts: ValidateOptions = {}): Cause[] {
  const kv = KINDS[`${obj.apiVersion ?? ''}|${obj.kind ?? ''}`];
  if (!kv) return [];
  // The semantic checks assume the typed shape; a value of the wrong type is the one cause.
  const p = decodeTypes(obj.apiVersion ?? '', obj.kind ?? '', obj);
  if (p) return [{ field: p.field, reason: 'FieldValueTypeInvalid', message: p.message }];
  const o = obj as never;
  if (old === undefined) return kv.create(o);
  if (opts.subresource === 'ephemeralcontainers' && obj.kind === 'Pod') {
    return validatePodEphemeralContainersUpdate(o, old as never);
  }
  // The CSR's own rules differ per subresource (who may set approvals, the certificate).
  if (obj.kind === 'CertificateSigningRequest') {
    return validateCertificateSigningRequestUpdate(o, old as never, opts.subresource);
  }
  if (opts.subresource === 'status') {
    if (obj.kind === 'Pod') return validatePodStatusUpdate(o, old as never);
    if (obj.kind === 'Service') return validateServiceStatusUpdate(o, old as never);
    return validateObjectMetaUpdate(metaOf(obj), metaOf(old));
  }
  return (kv.update ?? withMeta(kv.create))(o, old as never);
}

/**
 * Throws KDP_INVALID (422) when `validate` finds problems, with the upstream Status message
 * (`Service "x" is invalid: [...]`) and every cause in `details.causes`.
 */
export function assertValid(obj: KubeObject, old?: KubeObject, opts: ValidateOptions = {}): void {
  const causes = validate(obj, old, opts);
  if (causes.length === 0) return;
  const kind = obj.kind ?? '';
  const name = obj.metadata?.name ?? obj.metadata?.generateName ?? '';
  const apiVersion = obj.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const label = group ? `${kind}.${group}` : kind;
  throw kdpError('KDP_INVALID', invalidMessage(label, name, causes), { name, group, kind, causes });
}
