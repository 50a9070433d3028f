// A node agent's kubelet API, wired the same way wherever it runs: requests authorised by a
// SubjectAccessReview with the kubelet's own client (as upstream's webhook authorizer), pods
// from the agent, container logs from the runtime's log files, streaming from the runtime when
// it runs processes. Virtual nodes and `kdp node` processes listen on a free 127.0.0.1 port and
// publish it in Node.status.daemonEndpoints.kubeletEndpoint.Port; the API server's dialer
// reaches them there (backend-dialer.ts). netns nodes listen inside their namespace (node-set).

import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Pod } from '../../api/types.js';
import { issueLeaf, type CertPair } from '../../apiserver/pki/index.js';
import type { Client, KubeObject } from '../../client/types.js';
import type { Runtime } from '../runtime.js';
import type { StreamingRuntime } from '../streams.js';
import type { NodeMonitor } from '../../metrics/node-monitor.js';
import { nodeLogQueryHandler } from '../../logging/node-log-query.js';
import { runtimeContainerLogs } from './container-logs.js';
import { buildKubeletServer, type KubeletServerDeps, type KubeletServing, type KubeletUser } from './kubelet-server.js';

export interface KubeletTls { readonly certPem: string; readonly keyPem: string; readonly caPem: string }

export interface NodeKubeletOptions {
  readonly nodeName: string;
  readonly tls: KubeletServing;
  /** The kubelet's client (its SubjectAccessReviews). */
  readonly client: Client;
  /** The node's agent, once built (the server may be started before it, to publish its port). */
  readonly agent: () => { pod(ns: string, name: string): Pod | undefined; pods?(): readonly Pod[] } | undefined;
  readonly runtime: Runtime;
  readonly streaming?: StreamingRuntime;
  /** The node's monitor (/metrics, /stats/summary), once attached. */
  readonly monitor?: () => NodeMonitor | undefined;
  /** The log store holding the node's journal (its kubelet's and kube-proxy's lines), served as
   *  `/logs/?query=` (logging/node-log-query.ts); absent: `/logs/` is 404. */
  readonly logStore?: string;
}

/** upstream's kubelet webhook authorizer: a SubjectAccessReview for nodes/<subresource>. */
export function subjectAccessReviewer(client: Client, nodeName: string) {
  return async (user: KubeletUser, verb: string, subresource: string): Promise<boolean> => {
    const r = await client.create<KubeObject & { status?: { allowed?: boolean } }>(
      { group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' },
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {},
        spec: { user: user.name, groups: [...user.groups],
          resourceAttributes: { verb, resource: 'nodes', subresource, name: nodeName } } } as unknown as KubeObject);
    return r.status?.allowed === true;
  };
}

export function buildNodeKubeletServer(o: NodeKubeletOptions): Server {
  const deps: KubeletServerDeps = {
    nodeName: o.nodeName, tls: o.tls,
    authorize: subjectAccessReviewer(o.client, o.nodeName),
    pod: (ns, name) => o.agent()?.pod(ns, name),
    pods: () => o.agent()?.pods?.() ?? [],
    containerLogs: runtimeContainerLogs(o.runtime),
    ...(o.logStore ? { nodeLogs: nodeLogQueryHandler(o.logStore, o.nodeName) } : {}),
    ...(o.streaming ? { streaming: o.streaming } : {}),
    // Read per request: the monitor is attached after the server starts.
    get monitor() { return o.monitor?.(); },
  };
  return buildKubeletServer(deps);
}

/** Listens on a free loopback port; resolves with it and the closer. */
export async function listenOnLoopback(server: Server): Promise<{ port: number; close: () => void }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  return { port: (server.address() as AddressInfo).port, close: () => { server.close(); server.closeAllConnections?.(); } };
}

/** The kubelet's serving certificate from the cluster CA: CN the node's name, SANs its name,
 *  its InternalIPs and 127.0.0.1 (where virtual nodes serve). */
export async function issueKubeletServing(ca: CertPair, nodeName: string, nodeIPs: readonly string[]): Promise<KubeletTls> {
  const ips = [...new Set([...nodeIPs, '127.0.0.1'])];
  const pair = await issueLeaf(ca, { commonName: nodeName, usage: 'server',
    sans: [`DNS:${nodeName}`, ...ips.map((ip) => `IP:${ip}`)] });
  return { ...pair, caPem: ca.certPem };
}
