// The token cleaner, as upstream's pkg/controller/bootstrap/tokencleaner.go: every bootstrap
// token Secret in kube-system is deleted once its `expiration` has passed (with a uid
// precondition, so a Secret re-created under the same name survives), and looked at again when
// it will expire.

import type { KubeObject } from '../../client/types.js';
import { isKdpError } from '../../errors.js';
import {
  BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, expirationOf, hasExpired, secretData,
} from '../../bootstrap/token.js';
import type { ControllerContext } from '../options.js';
import { inNs } from '../refs.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';

export const SECRETS = { group: '', version: 'v1', resource: 'secrets' } as const;

export function buildTokenCleaner(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const inf = ctx.informers.informerFor<KubeObject>(inNs(SECRETS, BOOTSTRAP_TOKEN_NAMESPACE));
  const c = buildQueueController('tokencleaner', 1, sync);
  const enqueue = (s: KubeObject) => {
    if ((s as { type?: string }).type === BOOTSTRAP_TOKEN_SECRET_TYPE) c.queue.add(s.metadata.name!);
  };
  inf.addEventHandler({ onAdd: enqueue, onUpdate: (_, s) => enqueue(s) });

  async function sync(name: string): Promise<void> {
    const s = inf.cache.getByName(BOOTSTRAP_TOKEN_NAMESPACE, name);
    if (!s || s.metadata.deletionTimestamp) return;
    const data = secretData(s);
    const now = options.now();
    if (!hasExpired(data, now)) {
      const at = expirationOf(data);
      if (at !== undefined) c.queue.addAfter(name, at - now + 1);
      return;
    }
    try {
      await client.delete(inNs(SECRETS, BOOTSTRAP_TOKEN_NAMESPACE), name,
        { preconditions: { uid: s.metadata.uid! } });
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND') || isKdpError(e, 'KDP_CONFLICT')) return;
      throw e;
    }
  }

  return { name: 'tokencleaner', start: c.start, stop: c.stop };
}
