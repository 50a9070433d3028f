// Says on each pod which network namespace holds it (netns mode): the annotation
// `kdp.dev/netns`, set at create time (the name follows from the pod's UID, runtime-netns.ts),
// so `kubectl describe pod` shows it and `ip netns exec <it> …` needs no lookup. An admission
// plugin of kdp's own, not the kubelet's: NodeRestriction lets a kubelet write only status.

import type { Pod } from '../api/types.js';
import type { AdmissionPlugin } from '../apiserver/pipeline-types.js';
import { podNetnsName } from '../kubelet/runtime-netns.js';

export const NETNS_ANNOTATION = 'kdp.dev/netns';

export function buildNetnsAnnotationPlugin(prefix: string): AdmissionPlugin {
  return {
    name: 'KdpPodNetns',
    async admit(req) {
      if (req.group !== '' || req.resource !== 'pods' || req.subresource || req.operation !== 'CREATE') return;
      const pod = req.object as Pod | undefined;
      if (!pod?.metadata?.uid || pod.spec?.hostNetwork) return;
      pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}),
        [NETNS_ANNOTATION]: podNetnsName(prefix, pod.metadata.uid) };
    },
  };
}
