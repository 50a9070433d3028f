// How the API server reaches a pod or endpoint address for the proxy subresources. Upstream's
// API server dials pod IPs directly (it runs where the pod network is routed); kdp's runs in
// the host's namespace, so in netns mode the connection is made inside the node's namespace
// (NetnsSockets.connect) and virtual mode has nothing to reach.

import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

export interface BackendDialer {
  /** A TCP connection to ip:port as seen from `node`'s network. Rejects with the dial error. */
  dial(target: { readonly node?: string; readonly ip: string; readonly port: number }): Promise<Duplex>;
}

/** Virtual nodes run no processes: every dial fails with why. */
export function refusingDialer(why: string): BackendDialer {
  return { dial: () => Promise.reject(new Error(why)) };
}

/** Dials from this process's own network (tests; a host that routes the pod network). */
export function directDialer(): BackendDialer {
  return {
    dial: ({ ip, port }) => new Promise<Duplex>((resolve, reject) => {
      const s: Socket = connect({ host: ip, port });
      s.once('connect', () => { s.removeListener('error', reject); resolve(s); });
      s.once('error', reject);
    }),
  };
}

export const VIRTUAL_NODES_RUN_NO_PROCESSES =
  'virtual nodes run no processes (start the cluster with `sudo kdp up` to run them)';
