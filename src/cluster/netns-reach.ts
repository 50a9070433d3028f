// How kdp's own process (the API server) meets a netns cluster's network: it listens on the
// underlay gateway too — the `kubernetes` Service's endpoint, so pods reach the API at
// 10.96.0.1:443 — and it dials pod and endpoint addresses from inside their node's namespace
// (the proxy subresources). Both through NetnsSockets.

import type { EventEmitter } from 'node:events';
import type { BackendDialer } from '../apiserver/proxy/backend-dialer.js';
import type { NetnsSockets } from '../host/netns-socket.js';
import type { Topology } from '../host/topology.js';

/** Dials from the pod's node's namespace (any node's for an address without one: every node
 *  has host-gw routes to every pod CIDR). */
export function netnsBackendDialer(sockets: NetnsSockets, topo: Pick<Topology, 'nodeNetns'>, anyNode: () => string | undefined): BackendDialer {
  return {
    dial({ node, ip, port }) {
      const from = node ?? anyNode();
      if (!from) return Promise.reject(new Error('no node to dial from'));
      return sockets.connect(topo.nodeNetns(from), ip, port);
    },
  };
}

/** Accepts connections to `address:port` in the underlay namespace into `server` (the API
 *  server's TLS server), as if it listened there itself. Returns a closer. */
export async function listenOnUnderlay(
  sockets: NetnsSockets, topo: Topology, address: string, port: number, server: EventEmitter,
): Promise<() => void> {
  const srv = await sockets.listen(topo.underlayNetns, address, port);
  srv.on('connection', (s) => server.emit('connection', s));
  return () => { srv.close(); };
}
