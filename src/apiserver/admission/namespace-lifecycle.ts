// NamespaceLifecycle, as upstream's plugin/pkg/admission/namespace/lifecycle: objects may not be
// created or changed in a namespace that does not exist, nor created in one being terminated;
// `default`, `kube-system` and `kube-public` may not be deleted.

import type { Namespace } from '../../api/types.js';
import { kdpError } from '../../errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../pipeline-types.js';
import { getOrUndefined, type AdmissionSource } from './source.js';

export const IMMORTAL_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public'];

const ACCESS_REVIEWS = new Set(['localsubjectaccessreviews', 'subjectaccessreviews',
  'selfsubjectaccessreviews', 'selfsubjectrulesreviews']);

function qualified(req: AdmissionRequest): string {
  return req.group ? `${req.resource}.${req.group}` : req.resource;
}

function forbidden(req: AdmissionRequest, name: string, why: string) {
  const what = name ? `${qualified(req)} ${JSON.stringify(name)}` : qualified(req);
  return kdpError('KDP_FORBIDDEN', `${what} is forbidden: ${why}`, {
    ...(name ? { name } : {}), ...(req.group ? { group: req.group } : {}), kind: req.resource,
  });
}

export function buildNamespaceLifecyclePlugin(source: AdmissionSource): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    async admit(req) {
      const isNamespace = req.group === '' && req.resource === 'namespaces';
      if (isNamespace) {
        if (req.operation === 'DELETE' && IMMORTAL_NAMESPACES.includes(req.name ?? '')) {
          throw forbidden(req, req.name ?? '', 'this namespace may not be deleted');
        }
        return;
      }
      const ns = req.namespace;
      if (!ns || req.operation === 'DELETE') return;
      if (req.group === 'authorization.k8s.io' && ACCESS_REVIEWS.has(req.resource)) return;
      const namespace = (await getOrUndefined(source, 'namespaces', undefined, ns)) as
        Namespace | undefined;
      if (!namespace) {
        throw kdpError('KDP_NOT_FOUND', `namespaces ${JSON.stringify(ns)} not found`,
          { name: ns, kind: 'namespaces' });
      }
      if (req.operation === 'CREATE' && namespace.status?.phase === 'Terminating') {
        const name = req.name || req.object?.metadata.name || '';
        const err = forbidden(req, name, `unable to create new content in namespace ${ns} ` +
          'because it is being terminated');
        throw kdpError('KDP_FORBIDDEN', err.message, { ...err.details, causes: [{
          field: 'metadata.namespace', reason: 'NamespaceTerminating',
          message: `namespace ${ns} is being terminated`,
        }] });
      }
    },
  };
}
