// How the API server reaches a pod or endpoint address, or a node's kubelet, for the proxy
// subresources, exec/attach/portforward and logs. Upstream's API server dials pod and node IPs
// directly (it runs where they are routed); kdp's runs in the host's namespace, so:
// - netns mode: the connection is made inside the node's namespace (NetnsSockets.connect,
//   cluster/netns-reach.ts), where every node's InternalIP:10250 and the pod network answer;
// - virtual nodes (`kdp up --virtual`, `kdp node` processes) have InternalIPs that exist
//   nowhere: their kubelet listens on 127.0.0.1 at the port the node publishes in
//   status.daemonEndpoints.kubeletEndpoint.Port, so a dial marked `kubelet` goes to
//   127.0.0.1:<that port>; anything else (pods, other node ports) has nothing to reach.

import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

export interface DialTarget {
  readonly node?: string;
  readonly ip: string;
  readonly port: number;
  /** The node's kubelet API (port = its published kubelet port). */
  readonly kubelet?: boolean;
}

export interface BackendDialer {
  /** A TCP connection to ip:port as seen from `node`'s network. Rejects with the dial error. */
  dial(target: DialTarget): Promise<Duplex>;
}

/** Virtual nodes run no processes: every dial fails with why. */
export function refusingDialer(why: string): BackendDialer {
  return { dial: () => Promise.reject(new Error(why)) };
}

function tcp(host: string, port: number): Promise<Duplex> {
  return new Promise<Duplex>((resolve, reject) => {
    const s: Socket = connect({ host, port });
    s.once('connect', () => { s.removeListener('error', reject); resolve(s); });
    s.once('error', reject);
  });
}

/** Dials from this process's own network (tests; a host that routes the pod network). */
export function directDialer(): BackendDialer {
  return { dial: ({ ip, port }) => tcp(ip, port) };
}

/** Virtual nodes: kubelets on loopback at their published port; everything else refused. */
export function loopbackKubeletDialer(why: string): BackendDialer {
  return { dial: (t) => (t.kubelet ? tcp('127.0.0.1', t.port) : Promise.reject(new Error(why))) };
}

export const VIRTUAL_NODES_RUN_NO_PROCESSES =
  'virtual nodes run no processes (start the cluster with `sudo kdp up` to run them)';
