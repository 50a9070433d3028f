// The node Lease heartbeat (coordination.k8s.io/v1 Lease `kube-node-lease/<node>`), renewed
// every `renewIntervalMs` with holderIdentity = the node and leaseDurationSeconds 40, owned by
// the Node so it goes when the Node goes.

import type { Lease } from '../api/types.js';
import { isKdpError } from '../errors.js';
import type { Client } from '../client/types.js';

const LEASES = {
  group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'kube-node-lease',
} as const;

export interface LeaseHeartbeat {
  renew(): Promise<void>;
}

export function buildLeaseHeartbeat(
  client: Client, nodeName: string, nodeUid: () => string | undefined,
  now: () => number, durationSeconds = 40,
): LeaseHeartbeat {
  let cached: Lease | undefined;
  const micro = () => new Date(now()).toISOString().replace(/Z$/, '000Z');
  async function create(): Promise<Lease> {
    const uid = nodeUid();
    return client.create<Lease>(LEASES, {
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: {
        name: nodeName, namespace: 'kube-node-lease',
        ...(uid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid }] }
          : {}),
      },
      spec: { holderIdentity: nodeName, leaseDurationSeconds: durationSeconds, renewTime: micro() },
    });
  }
  return {
    async renew() {
      try {
        if (!cached) {
          try {
            cached = await client.get<Lease>(LEASES, nodeName);
          } catch (e) {
            if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
            cached = await create();
            return;
          }
        }
        cached = await client.update<Lease>(LEASES, {
          ...cached, spec: { ...cached.spec, holderIdentity: nodeName,
            leaseDurationSeconds: durationSeconds, renewTime: micro() },
        });
      } catch (e) {
        cached = undefined; // re-read next time (conflict, deleted, ...)
        throw e;
      }
    },
  };
}
