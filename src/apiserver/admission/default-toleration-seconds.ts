// DefaultTolerationSeconds, as upstream's plugin/pkg/admission/defaulttolerationseconds: pods
// tolerate `node.kubernetes.io/not-ready` and `unreachable` (NoExecute) for 300 s unless they
// already tolerate them (an empty key or effect matches).

import type { Pod, Toleration } from '../../api/types.js';
import type { AdmissionPlugin } from '../pipeline-types.js';

export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
export const DEFAULT_TOLERATION_SECONDS = 300;

function tolerates(list: readonly Toleration[], key: string): boolean {
  return list.some((t) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect));
}

export function buildDefaultTolerationSecondsPlugin(seconds = DEFAULT_TOLERATION_SECONDS):
  AdmissionPlugin {
  return {
    name: 'DefaultTolerationSeconds',
    async admit(req) {
      if (req.group !== '' || req.resource !== 'pods' || req.subresource) return;
      if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return;
      const pod = req.object as Pod | undefined;
      const spec = pod?.spec;
      if (!spec) return;
      const list = [...(spec.tolerations ?? [])];
      for (const key of [NOT_READY_TAINT, UNREACHABLE_TAINT]) {
        if (!tolerates(list, key)) {
          list.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
        }
      }
      spec.tolerations = list;
    },
  };
}
