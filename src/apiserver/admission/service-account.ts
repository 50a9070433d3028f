// ServiceAccount admission, as upstream's plugin/pkg/admission/serviceaccount (v1.33): a pod
// without `serviceAccountName` gets `default`; the ServiceAccount must exist (the `default` one
// is waited for briefly, the controller manager creates it with the namespace), else 403; unless
// the pod or its ServiceAccount opts out (`automountServiceAccountToken: false`, the pod's
// setting winning) or a container already mounts the path, the pod gets the projected volume
// `kube-api-access-<5 chars>` (a bound token expiring in 3607 s, the cluster CA from
// `kube-root-ca.crt`, the namespace) mounted read-only at
// /var/run/secrets/kubernetes.io/serviceaccount in every container and init container.
// Mirror pods (static pods) are left alone, as upstream does.

import type { Pod } from '../../api/types.js';
import type { KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../pipeline-types.js';
import { getOrUndefined, type AdmissionSource } from './source.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';
export const SA_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const SA_VOLUME_PREFIX = 'kube-api-access-';
/** upstream's warnOnlyBoundTokenExpirationSeconds: 1 h + 7 s, so the kubelet's refresh at 80 %
 *  of the lifetime is visible as distinct from a plain hour. */
export const SA_TOKEN_EXPIRATION_SECONDS = 3607;
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
/** utilrand.String's alphabet (no vowels, no confusable digits). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export interface ServiceAccountPluginOptions {
  readonly source: AdmissionSource;
  /** Attempts for the `default` ServiceAccount (upstream: 10, 100–200 ms apart). */
  readonly defaultAttempts?: number;
  readonly retryMs?: number;
  readonly random?: () => number;
}

interface ServiceAccount extends KubeObject {
  automountServiceAccountToken?: boolean;
}

function randomSuffix(random: () => number): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return s;
}

/** The projected volume upstream's plugin adds (TokenVolumeSource). */
export function apiAccessVolume(name: string) {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: SA_TOKEN_EXPIRATION_SECONDS, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace',
          fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
}

export function buildServiceAccountPlugin(o: ServiceAccountPluginOptions): AdmissionPlugin {
  const random = o.random ?? Math.random;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function lookup(namespace: string, name: string): Promise<ServiceAccount | undefined> {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? (o.defaultAttempts ?? 10) : 1;
    for (let i = 0; i < attempts; i++) {
      if (i) await sleep(o.retryMs ?? 100 + Math.floor(random() * 100));
      const sa = await getOrUndefined(o.source, 'serviceaccounts', namespace, name);
      if (sa) return sa as ServiceAccount;
    }
    return undefined;
  }

  function forbidden(req: AdmissionRequest, pod: Pod, why: string) {
    const name = pod.metadata?.name ?? '';
    return kdpError('KDP_FORBIDDEN', `pods ${JSON.stringify(name)} is forbidden: ${why}`,
      { ...(name ? { name } : {}), kind: 'pods' });
  }

  return {
    name: 'ServiceAccount',
    async admit(req) {
      if (req.group !== '' || req.resource !== 'pods' || req.subresource || req.operation !== 'CREATE') return;
      const pod = req.object as Pod | undefined;
      const spec = pod?.spec;
      if (!pod || !spec) return;
      if (pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined) return;
      if (!spec.serviceAccountName) spec.serviceAccountName = DEFAULT_SERVICE_ACCOUNT;
      const namespace = req.namespace ?? pod.metadata?.namespace ?? 'default';
      const sa = await lookup(namespace, spec.serviceAccountName);
      if (!sa) {
        throw forbidden(req, pod, `error looking up service account ${namespace}/` +
          `${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`);
      }
      const automount = spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
      if (!automount) return;
      const containers = [...(spec.initContainers ?? []), ...spec.containers];
      if (containers.some((c) => (c.volumeMounts ?? []).some((m) => m.mountPath === SA_MOUNT_PATH))) return;
      const taken = new Set((spec.volumes ?? []).map((v) => v.name));
      let name: string;
      do name = `${SA_VOLUME_PREFIX}${randomSuffix(random)}`; while (taken.has(name));
      spec.volumes = [...(spec.volumes ?? []), apiAccessVolume(name) as never];
      for (const c of containers) {
        c.volumeMounts = [...(c.volumeMounts ?? []), { name, readOnly: true, mountPath: SA_MOUNT_PATH }];
      }
    },
  };
}
