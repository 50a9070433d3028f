// The ServiceAccount controller, as upstream's (pkg/controller/serviceaccount/
// serviceaccounts_controller.go): every active namespace has a ServiceAccount `default`; it is
// created when a namespace appears and re-created when deleted. Terminating namespaces are
// left alone (the namespace controller is emptying them).

import type { Namespace } from '../../api/types.js';
import type { KubeObject } from '../../client/types.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { NAMESPACES, inNs } from '../refs.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';

export const SERVICE_ACCOUNTS = { group: '', version: 'v1', resource: 'serviceaccounts' } as const;
/** upstream's DefaultServiceAccountsControllerOptions: ServiceAccountsToEnsure. */
export const SERVICE_ACCOUNTS_TO_ENSURE = ['default'] as const;

/** Whether the namespace is gone from use: being deleted or not Active. */
export function isTerminating(ns: Namespace | undefined): boolean {
  if (!ns || ns.metadata.deletionTimestamp) return true;
  const phase = (ns.status as { phase?: string } | undefined)?.phase;
  return phase !== undefined && phase !== 'Active';
}

/** A create refused because the namespace is gone or terminating: nothing to retry. */
export function isNamespaceGone(e: unknown): boolean {
  return isKdpError(e, 'KDP_NOT_FOUND') || isKdpError(e, 'KDP_FORBIDDEN');
}

export function buildServiceAccountController(ctx: ControllerContext): Controller {
  const { client } = ctx;
  const nsInf = ctx.informers.informerFor<Namespace>(NAMESPACES);
  const saInf = ctx.informers.informerFor<KubeObject>(SERVICE_ACCOUNTS);
  const c = buildQueueController('serviceaccount', 1, sync);
  nsInf.addEventHandler({
    onAdd: (n) => c.queue.add(n.metadata.name!),
    onUpdate: (_, n) => c.queue.add(n.metadata.name!),
  });
  saInf.addEventHandler({
    onDelete: (sa) => { if (sa.metadata.namespace) c.queue.add(sa.metadata.namespace); },
  });

  async function sync(name: string): Promise<void> {
    if (isTerminating(nsInf.cache.get(name))) return;
    for (const sa of SERVICE_ACCOUNTS_TO_ENSURE) {
      if (saInf.cache.getByName(name, sa)) continue;
      try {
        await client.create(inNs(SERVICE_ACCOUNTS, name), { apiVersion: 'v1',
          kind: 'ServiceAccount', metadata: { name: sa, namespace: name } });
      } catch (e) {
        if (isKdpError(e, 'KDP_ALREADY_EXISTS')) continue;
        if (isNamespaceGone(e) && isTerminating(nsInf.cache.get(name))) return;
        throw e;
      }
    }
  }

  return { name: 'serviceaccount', start: c.start, stop: c.stop };
}
