// The bootstrap signer, as upstream's pkg/controller/bootstrap/bootstrapsigner.go: the
// `kube-public/cluster-info` ConfigMap carries one `jws-kubeconfig-<id>` detached signature of
// its kubeconfig per bootstrap token that may sign (`usage-bootstrap-signing: "true"`, not
// expired); signatures of other tokens are removed and stale ones recomputed. Any change to the
// ConfigMap or to a token Secret triggers one sync.

import type { KubeObject } from '../../client/types.js';
import { isKdpError } from '../../errors.js';
import {
  BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, expirationOf, hasExpired, tokenOfSecret,
  usageEnabled,
} from '../../bootstrap/token.js';
import {
  CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, JWS_KEY_PREFIX, KUBECONFIG_KEY,
} from '../../bootstrap/cluster-info.js';
import { computeDetachedSignature } from '../../bootstrap/jws.js';
import type { ControllerContext } from '../options.js';
import { inNs } from '../refs.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';
import { SECRETS } from './tokencleaner.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' } as const;
const KEY = 'cluster-info';

interface ConfigMap extends KubeObject { data?: Record<string, string> }

export function buildBootstrapSigner(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const cms = ctx.informers.informerFor<ConfigMap>(inNs(CONFIGMAPS, CLUSTER_INFO_NAMESPACE));
  const secrets = ctx.informers.informerFor<KubeObject>(inNs(SECRETS, BOOTSTRAP_TOKEN_NAMESPACE));
  const c = buildQueueController('bootstrapsigner', 1, sync);
  const kick = () => c.queue.add(KEY);
  cms.addEventHandler({
    onAdd: (cm) => { if (cm.metadata.name === CLUSTER_INFO_NAME) kick(); },
    onUpdate: (_, cm) => { if (cm.metadata.name === CLUSTER_INFO_NAME) kick(); },
  });
  const isToken = (s: KubeObject) => (s as { type?: string }).type === BOOTSTRAP_TOKEN_SECRET_TYPE;
  secrets.addEventHandler({
    onAdd: (s) => { if (isToken(s)) kick(); },
    onUpdate: (_, s) => { if (isToken(s)) kick(); },
    onDelete: (s) => { if (isToken(s)) kick(); },
  });

  /** The signing tokens' secrets by id; schedules a sync at the next expiry. */
  function signingTokens(now: number): Map<string, string> {
    const out = new Map<string, string>();
    let next = Infinity;
    for (const s of secrets.cache.list()) {
      const t = tokenOfSecret(s);
      if (!t || s.metadata.deletionTimestamp || !usageEnabled(t.data, 'signing')) continue;
      if (hasExpired(t.data, now)) continue;
      out.set(t.token.id, t.token.secret);
      const at = expirationOf(t.data);
      if (at !== undefined) next = Math.min(next, at);
    }
    if (next !== Infinity) c.queue.addAfter(KEY, next - now + 1);
    return out;
  }

  async function sync(): Promise<void> {
    const cm = cms.cache.getByName(CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME);
    if (!cm || cm.metadata.deletionTimestamp) return;
    const content = cm.data?.[KUBECONFIG_KEY];
    if (content === undefined) return;
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(cm.data ?? {})) if (!k.startsWith(JWS_KEY_PREFIX)) data[k] = v;
    for (const [id, secret] of signingTokens(options.now())) {
      data[`${JWS_KEY_PREFIX}${id}`] = computeDetachedSignature(content, id, secret);
    }
    const before = cm.data ?? {};
    const same = Object.keys(data).length === Object.keys(before).length &&
      Object.entries(data).every(([k, v]) => before[k] === v);
    if (same) return;
    try {
      await client.update(inNs(CONFIGMAPS, CLUSTER_INFO_NAMESPACE), { ...cm, data } as ConfigMap);
    } catch (e) {
      // A newer ConfigMap is on its way through the informer; it brings another sync.
      if (isKdpError(e, 'KDP_CONFLICT') || isKdpError(e, 'KDP_NOT_FOUND')) return;
      throw e;
    }
  }

  return { name: 'bootstrapsigner', start: c.start, stop: c.stop };
}
