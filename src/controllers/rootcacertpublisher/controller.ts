// The root CA publisher, as upstream's (pkg/controller/certificates/rootcacertpublisher): every
// namespace holds the ConfigMap `kube-root-ca.crt` with the cluster CA as `ca.crt` and upstream's
// description annotation, so a pod's client can verify the API server (the kubelet projects it
// into service-account token volumes). A changed or deleted copy is put back. Without a CA (the
// controller manager was given none) the controller does nothing.

import type { Namespace } from '../../api/types.js';
import type { KubeObject } from '../../client/types.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { NAMESPACES, inNs } from '../refs.js';
import { buildQueueController } from '../runner.js';
import { isNamespaceGone, isTerminating } from '../serviceaccount/controller.js';
import type { Controller } from '../util.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const DESCRIPTION = 'Contains a CA bundle that can be used to verify the kube-apiserver ' +
  'when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' } as const;

interface ConfigMap extends KubeObject { data?: Record<string, string> }

function upToDate(cm: ConfigMap, ca: string): boolean {
  const data = cm.data ?? {};
  return Object.keys(data).length === 1 && data['ca.crt'] === ca &&
    (cm.metadata.annotations?.[DESCRIPTION_ANNOTATION] ?? '') !== '';
}

export function buildRootCaPublisher(ctx: ControllerContext): Controller {
  const { client } = ctx;
  const ca = ctx.options.rootCaPem;
  if (!ca) return { name: 'root-ca-certificate-publisher', start() {}, stop() {} };
  const nsInf = ctx.informers.informerFor<Namespace>(NAMESPACES);
  const cmInf = ctx.informers.informerFor<ConfigMap>(CONFIGMAPS);
  const c = buildQueueController('root-ca-certificate-publisher', 1, sync);
  nsInf.addEventHandler({
    onAdd: (n) => c.queue.add(n.metadata.name!),
    onUpdate: (_, n) => c.queue.add(n.metadata.name!),
  });
  const ours = (cm: ConfigMap) => cm.metadata.name === ROOT_CA_CONFIGMAP && cm.metadata.namespace;
  cmInf.addEventHandler({
    onUpdate: (_, cm) => { if (ours(cm)) c.queue.add(cm.metadata.namespace!); },
    onDelete: (cm) => { if (ours(cm)) c.queue.add(cm.metadata.namespace!); },
  });

  async function sync(ns: string): Promise<void> {
    if (isTerminating(nsInf.cache.get(ns))) return;
    const cm = cmInf.cache.getByName(ns, ROOT_CA_CONFIGMAP);
    const ref = inNs(CONFIGMAPS, ns);
    try {
      if (!cm) {
        await client.create(ref, { apiVersion: 'v1', kind: 'ConfigMap',
          metadata: { name: ROOT_CA_CONFIGMAP, namespace: ns,
            annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
          data: { 'ca.crt': ca! } } as ConfigMap);
        return;
      }
      if (upToDate(cm, ca!)) return;
      await client.update(ref, { ...cm, data: { 'ca.crt': ca! }, metadata: { ...cm.metadata,
        annotations: { ...(cm.metadata.annotations ?? {}),
          [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
      } as ConfigMap);
    } catch (e) {
      // Another writer got there first: the informer brings the change and a new sync.
      if (isKdpError(e, 'KDP_ALREADY_EXISTS') || isKdpError(e, 'KDP_CONFLICT')) return;
      if (isNamespaceGone(e) && isTerminating(nsInf.cache.get(ns))) return;
      throw e;
    }
  }

  return { name: 'root-ca-certificate-publisher', start: c.start, stop: c.stop };
}
