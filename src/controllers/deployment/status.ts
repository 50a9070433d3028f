// A Deployment's status after a sync step: counts from its ReplicaSets and the Progressing
// condition `kubectl rollout status` waits on, written only when it changed.

import type { Deployment, ReplicaSet } from '../../api/types.js';
import { objectKey } from '../../client/cache.js';
import { isKdpError } from '../../errors.js';
import { DEPLOYMENTS, inNs } from '../refs.js';
import type { DeploymentSync } from './steps.js';
import {
  calculateStatus, condition, deploymentComplete, deploymentProgressing, getCondition, setCondition,
} from './util.js';

export async function syncStatus(ds: DeploymentSync, d: Deployment, all: ReplicaSet[], newRS?: ReplicaSet,
  created = false): Promise<void> {
  const now = ds.ops.now();
  const s = calculateStatus(d, all, newRS, now);
  const name = newRS?.metadata.name;
  const prog = getCondition(s, 'Progressing');
  const complete = s.replicas === s.updatedReplicas && prog?.reason === 'NewReplicaSetAvailable'
    && deploymentComplete(d, s);
  if (created && name) {
    setCondition(s, condition('Progressing', 'True', 'NewReplicaSetCreated',
      `Created new replica set "${name}"`, now));
  } else if (!complete && name) {
    if (deploymentComplete(d, s)) {
      setCondition(s, condition('Progressing', 'True', 'NewReplicaSetAvailable',
        `ReplicaSet "${name}" has successfully progressed.`, now));
    } else if (deploymentProgressing(d, s) || !prog || prog.reason === 'NewReplicaSetAvailable') {
      setCondition(s, condition('Progressing', 'True', 'ReplicaSetUpdated',
        `ReplicaSet "${name}" is progressing.`, now));
    }
  }
  if (JSON.stringify(s) === JSON.stringify({ ...d.status, conditions: d.status?.conditions })) {
    return;
  }
  try {
    await ds.client.update(inNs(DEPLOYMENTS, d.metadata.namespace), { ...d, status: s },
      { subresource: 'status' });
  } catch (e) {
    if (isKdpError(e, 'KDP_CONFLICT')) { ds.requeueAfter(objectKey(d), 10); return; }
    if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
  }
}
