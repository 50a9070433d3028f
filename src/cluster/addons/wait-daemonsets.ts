// `kdp up` is ready once the kube-system DaemonSets it installed have a Ready pod on every node
// they are meant for (status.numberReady = desiredNumberScheduled, for the current generation).
// A pod whose container keeps failing to start (CrashLoopBackOff after two restarts) ends the
// wait with an error naming it, instead of waiting for ever.

import type { DaemonSet, Pod } from '../../api/types.js';
import type { Client } from '../../client/types.js';
import { kdpError } from '../../errors.js';

const DAEMONSETS = { group: 'apps', version: 'v1', resource: 'daemonsets' } as const;

export async function waitForDaemonSets(client: Client, namespace: string, names: readonly string[],
  progress: (line: string) => void, pollMs = 50): Promise<void> {
  const done = new Set<string>();
  for (;;) {
    for (const name of names) {
      if (done.has(name)) continue;
      const ds = await client.get<DaemonSet>({ ...DAEMONSETS, namespace }, name);
      const s = ds.status;
      if (s && (s.observedGeneration ?? 0) >= (ds.metadata.generation ?? 0) && s.desiredNumberScheduled > 0
        && s.numberReady === s.desiredNumberScheduled && (s.updatedNumberScheduled ?? 0) === s.desiredNumberScheduled) {
        done.add(name);
        progress(`daemonset ${namespace}/${name}: ${s.numberReady} of ${s.desiredNumberScheduled} pods Ready`);
        continue;
      }
      const selector = Object.entries(ds.spec?.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
      const pods = await client.list<Pod>({ group: '', version: 'v1', resource: 'pods', namespace }, { labelSelector: selector });
      for (const p of pods.items) {
        const bad = p.status?.containerStatuses?.find((c) => c.state?.waiting?.reason === 'CrashLoopBackOff' && c.restartCount >= 2);
        if (bad) {
          throw kdpError('KDP_UNAVAILABLE', `${namespace}/${p.metadata.name} on ${p.spec?.nodeName ?? '?'}: container ` +
            `${bad.name} keeps failing to start (${bad.restartCount} restarts; kubectl logs -n ${namespace} ${p.metadata.name})`);
        }
      }
    }
    if (done.size === names.length) return;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
