// pods/log: picks the container as upstream does, then asks the registered log provider.

import type { KubeObject } from '../../client/types.js';
import type { LogOptions, ServiceDeps } from './deps.js';
import { badRequest } from './errors.js';

export async function podLogs(deps: ServiceDeps, pod: KubeObject, opts: LogOptions):
  Promise<string | AsyncIterable<string>> {
  const name = pod.metadata.name!;
  const cs = ((pod.spec as { containers?: Array<{ name: string }> } | undefined)?.containers ?? [])
    .map((c) => c.name);
  let container = opts.container;
  if (!container) {
    if (cs.length !== 1) {
      throw badRequest(`a container name must be specified for pod ${name}, choose one of: ` +
        `[${cs.join(' ')}]`);
    }
    container = cs[0]!;
  } else if (!cs.includes(container) && !((pod.spec as { initContainers?: Array<{ name: string }> } | undefined)
    ?.initContainers ?? []).some((c) => c.name === container)) {
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  }
  if (!deps.logProvider) {
    throw badRequest(`container "${container}" in pod "${name}" is waiting to start: ` +
      'no node serves its logs');
  }
  return deps.logProvider.logs(pod, container, { ...opts, container });
}
