// pods/log as upstream's REST (pkg/registry/core/pod/rest/log.go + LogLocation): the options
// validated (422 PodLogOptions invalid), the container picked (validateContainer), a pod not yet
// scheduled answers an empty log, and the rest is the pod's node's kubelet's answer
// (`/containerLogs/{ns}/{pod}/{container}`), fetched by the log provider
// (proxy/kubelet-logs.ts) with the kubelet's errors passed through.

import type { KubeObject } from '../../client/types.js';
import { kdpError, type Cause } from '../../errors.js';
import type { LogOptions, ServiceDeps } from './deps.js';
import { badRequest } from './errors.js';

/** upstream's ValidatePodLogOptions, as Status causes. */
function validateLogOptions(o: LogOptions): Cause[] {
  const causes: Cause[] = [];
  const bad = (field: string, value: number, message: string) =>
    causes.push({ field, reason: 'FieldValueInvalid', message: `Invalid value: ${value}: ${message}` });
  if (o.tailLines !== undefined && o.tailLines < 0) bad('tailLines', o.tailLines, 'must be greater than or equal to 0');
  if (o.limitBytes !== undefined && o.limitBytes < 1) bad('limitBytes', o.limitBytes, 'must be greater than 0');
  if (o.sinceSeconds !== undefined && o.sinceTime !== undefined) {
    causes.push({ field: '', reason: 'FieldValueForbidden',
      message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified' });
  } else if (o.sinceSeconds !== undefined && o.sinceSeconds < 1) {
    bad('sinceSeconds', o.sinceSeconds, 'must be greater than 0');
  }
  return causes;
}

/** upstream's validateContainer: the named one, else the only one, else 400 naming them all. */
function containerOf(pod: KubeObject, wanted: string | undefined): string {
  const spec = pod.spec as { containers?: Array<{ name: string }>; initContainers?: Array<{ name: string }>;
    ephemeralContainers?: Array<{ name: string }> } | undefined;
  const name = pod.metadata.name!;
  const main = (spec?.containers ?? []).map((c) => c.name);
  const all = [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])]
    .map((c) => c.name);
  if (wanted) {
    if (!all.includes(wanted)) throw badRequest(`container ${wanted} is not valid for pod ${name}`);
    return wanted;
  }
  if (main.length === 1) return main[0]!;
  if (main.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(' ')}]`);
}

export async function podLogs(deps: ServiceDeps, pod: KubeObject, opts: LogOptions):
  Promise<string | AsyncIterable<string | Uint8Array>> {
  const causes = validateLogOptions(opts);
  if (causes.length) {
    const name = pod.metadata.name!;
    const text = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
    throw kdpError('KDP_INVALID', `PodLogOptions "${name}" is invalid: ` +
      (text.length > 1 ? `[${text.join(', ')}]` : text[0]), { name, kind: 'PodLogOptions', causes });
  }
  const container = containerOf(pod, opts.container);
  // Not scheduled: no node to ask, an empty log (upstream's empty location).
  if (!(pod.spec as { nodeName?: string } | undefined)?.nodeName) return '';
  if (!deps.logProvider) {
    throw badRequest(`container "${container}" in pod "${pod.metadata.name}" is waiting to start: ` +
      'no node serves its logs');
  }
  return deps.logProvider.logs(pod, container, { ...opts, container });
}
