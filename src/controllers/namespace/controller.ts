// The namespace controller: a namespace with a deletionTimestamp is emptied (every namespaced
// resource the registry lists is deleted), marked Terminating with upstream's conditions, and
// once nothing is left its `kubernetes` finalizer is removed through `namespaces/finalize`,
// letting the API server remove it. Objects held by finalizers or graceful pods are waited for.

import type { Namespace } from '../../api/types.js';
import { BUILTIN_RESOURCES } from '../../api/registry.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { NAMESPACES } from '../refs.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';

// Not listable. Events are deleted like everything else (upstream does too).
const SKIP = new Set(['bindings', 'localsubjectaccessreviews']);

export function buildNamespaceController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const nsInf = ctx.informers.informerFor<Namespace>(NAMESPACES);
  const c = buildQueueController('namespace', 2, sync);
  nsInf.addEventHandler({
    onAdd: (n) => { if (n.metadata.deletionTimestamp) c.queue.add(n.metadata.name!); },
    onUpdate: (_, n) => { if (n.metadata.deletionTimestamp) c.queue.add(n.metadata.name!); },
  });
  const resources = BUILTIN_RESOURCES.filter((r) => r.namespaced && !SKIP.has(r.resource)
    && r.verbs.includes('list') && r.verbs.includes('delete'));

  async function sync(name: string): Promise<void> {
    const ns = nsInf.cache.get(name);
    if (!ns?.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const r of resources) {
      const ref = { group: r.group, version: r.version, resource: r.resource, namespace: name };
      let items;
      try { items = (await client.list(ref)).items; } catch { continue; }
      for (const o of items) {
        remaining++;
        if (o.metadata.deletionTimestamp) continue;
        await client.delete(ref, o.metadata.name!).catch((e) => {
          if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
        });
      }
    }
    if (remaining > 0) { c.queue.addAfter(name, options.scaled(1000) + 20); return; }
    const fins = ns.spec?.finalizers ?? [];
    if (!fins.includes('kubernetes')) return;
    try {
      await client.update(NAMESPACES, { ...ns, spec: { ...ns.spec,
        finalizers: fins.filter((f) => f !== 'kubernetes') } }, { subresource: 'finalize' });
    } catch (e) {
      if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
    }
  }

  return { name: 'namespace', start: c.start, stop: c.stop };
}
