// The node agents of an in-process cluster: kubelet + kube-proxy per node — virtual runtime and
// in-memory rules, or (with `netns`) a node namespace, the netns runtime and kernel rules —
// each talking only to the API server. `stop`/`start` of one node is how a lab plays the
// node-failure timeline: heartbeats stop, the control plane reacts.

import type { Client } from '../client/types.js';
import type { InformerFactory } from '../client/informer.js';
import { buildNodeAgent, type NodeAgent } from '../kubelet/node-agent.js';
import { buildNodeKubeletServer, listenOnLoopback } from '../kubelet/server/serve.js';
import type { KubeletServing } from '../kubelet/server/kubelet-server.js';
import { fileLogStore, nodeDirOf } from '../kubelet/container-log-files.js';
import { logStoreDir } from '../logging/collector.js';
import { buildVirtualRuntime } from '../kubelet/runtime-virtual.js';
import type { ProxyMode } from '../proxy/backend.js';
import { buildMemoryApplier } from '../proxy/applier.js';
import { RuleHistory, rulesDir } from '../proxy/history.js';
import { buildKubeProxy, type KubeProxy } from '../proxy/proxy-server.js';
import { kdpError } from '../errors.js';
import { serveMetrics } from '../proxy/metrics-server.js';
import type { NodeMonitor, NodeMonitors } from '../metrics/node-monitor.js';
import { netnsStreaming } from '../kubelet/netns-streaming.js';
import { serveNodeRuntimeEndpoint } from '../kubelet/runtime-endpoint/serve.js';
import { withEphemeral, type EphemeralRuntime } from '../kubelet/ephemeral.js';
import { podNetnsName } from '../kubelet/runtime-netns.js';
import { volumeFiles } from '../kubelet/projected.js';
import { readFileSync } from 'node:fs';
import type { Runtime } from '../kubelet/runtime.js';
import type { Client as KClient, KubeObject } from '../client/types.js';
import type { NetnsDataPlane } from './data-plane-netns.js';
import type { NodeClientsFactory } from './node-identity.js';
import type { IPFamily } from '../api/net.js';
import { loadTopology, nodeIP6, type TopologySpec } from '../host/topology.js';
import { hostOfNode, nodeIPOnHosts, SINGLE_HOST, type HostLayout } from '../host/hosts.js';
import { buildKernelNetpolApplier, buildMemoryNetpolApplier, type NetpolApplier } from '../netpol/applier.js';
import { buildNetpolController, type NetpolController } from '../netpol/controller.js';
import { writeNetpolTable } from '../netpol/table-file.js';
import { withHostComponents, type HostComponentsRuntime } from '../kubelet/host-components.js';
import { kubeProxyComponent } from './addons/kube-proxy-runner.js';
import { kdpCniComponent } from './addons/kdp-cni.js';

export interface NodeSpec {
  readonly name: string;
  /** The IPv4 underlay address (172.18.0.x; eth0 in netns mode). */
  readonly ip: string;
  /** IPv6 underlay address (IPv6 and dual-stack clusters). */
  readonly ip6?: string;
  /** The node's InternalIPs, primary family first (the cluster CIDR order); default [ip]. */
  readonly ips?: readonly string[];
  /** netns mode: the simulated host (0-based, host/hosts.ts) the node runs on; default 0. */
  readonly host?: number;
}

/** The node's InternalIPs (kubelet --node-ip, kube-proxy's node IPs). */
export function nodeIPsOf(n: NodeSpec): readonly string[] {
  return n.ips?.length ? n.ips : [n.ip];
}

export interface NodeSetOptions {
  readonly client: Client;
  readonly dataDir: string;
  readonly proxyMode: ProxyMode;
  readonly kubeProxyConfig?: string;
  readonly timeScale: number;
  readonly informers: InformerFactory;
  readonly onError: (where: string, err: unknown) => void;
  /** Warnings of the agents (kube-proxy rule drift), one line each. */
  readonly log?: (line: string) => void;
  /** netns mode: nodes get a namespace, the netns runtime and a kernel applier. */
  readonly netns?: NetnsDataPlane;
  /** Each node's own identities (kubelet, kube-proxy); default: both use `client`. */
  readonly clientsFor?: NodeClientsFactory;
  /** The kubelet API's serving certificate for a node, and the CA of its clients: served on the
   *  node's InternalIP:10250 in netns mode, on a loopback port by virtual nodes (or still to be
   *  issued: a joined node's kubelet-serving CSR). */
  readonly kubeletTls?: (node: NodeSpec) => Promise<KubeletServing>;
  /** Resource usage and kubelet metrics of each node (kdp up's monitoring); default none. */
  readonly monitors?: NodeMonitors;
  /**
   * kube-proxy and the pod network's agent run as the node's pods (kubeadm's kube-proxy
   * DaemonSet, the kdp-cni DaemonSet: `kdp up`): the kubelet starts them for their pods
   * (host-components.ts) from the pod's own configuration; proxyMode and kubeProxyConfig are
   * then unused. Default false: each node's kube-proxy starts with the node, from those two.
   */
  readonly componentsAsPods?: boolean;
  /** The kubelets' `resolvConf` (KubeletConfiguration): the file whose nameservers, search and
   *  options `dnsPolicy: Default` pods (the coredns pods: its upstreams) get and ClusterFirst pods'
   *  search lists end with. Default /etc/resolv.conf; '' none, as `--resolv-conf=""` (such pods
   *  then ask the node's localhost, which kdp's DNS server leaves out as a loop: REFUSED at once). */
  readonly resolvConf?: string;
  /** The log store holding a node's journal, served as its kubelet's `/logs/?query=`; default
   *  the cluster's store in the data dir (logging/collector.ts). */
  readonly nodeLogStore?: (node: string) => string;
}

interface Running {
  readonly agent: NodeAgent;
  /** The node's own kube-proxy (undefined: it runs as a pod, in `components`). */
  readonly proxy?: KubeProxy;
  readonly components?: HostComponentsRuntime;
  /** Stops serving kube-proxy's metrics. */
  readonly closeMetrics?: () => void;
  /** Stops the kubelet API. */
  readonly closeKubelet?: () => void;
  /** The node's NetworkPolicy controller and where its table goes (issue 18). */
  readonly netpol: NetpolController;
  readonly netpolApplier: NetpolApplier;
}

/**
 * How a node is down. `stopped`: its agents (kubelet, kube-proxy) are gone, pods and links stay
 * — a crashed kubelet. `partitioned`: the same, and its link to the other nodes is down too (in
 * virtual mode there is no link) — a pulled cable; pods keep running unseen. `crashed`: power
 * off — agents gone, every pod process killed, link down; the next start boots it with nothing
 * running and its kubelet recreates the pods still bound to it.
 */
export type NodeFailure = 'stopped' | 'partitioned' | 'crashed';

export interface NodeSet {
  /** Starts the node, or brings it back from any failure (link up; a crashed one boots anew). */
  start(node: NodeSpec): Promise<void>;
  stop(name: string): Promise<void>;
  /** Fails a running or stopped node the given way; a no-op when it already is. */
  fail(name: string, how: NodeFailure): Promise<void>;
  isRunning(name: string): boolean;
  /** `running`, how it failed, or undefined for a node never started. */
  stateOf(name: string): 'running' | NodeFailure | undefined;
  stopAll(): Promise<void>;
  /** The node's `inet kdp-netpol` table as its data plane lists it (undefined: not running). */
  netpolTable(name: string): Promise<string | undefined>;
  /** Resolves once the node's policy controller applied every change seen before the call. */
  netpolSynced(name: string): Promise<void>;
}

/**
 * Node i (0-based) of a kdp cluster: `n<i+1>` at 172.18.0.(i+2) (DESIGN.md §4); with IPv6 in
 * `families` also at <underlay cidr6>::(i+2), and InternalIPs in `families` order. On several
 * simulated hosts (`hosts`), node i is on host i mod N, numbered in its host's subnet when the
 * hosts are routed (hosts.ts).
 */
export function nodeSpecs(
  count: number, families: readonly IPFamily[] = ['IPv4'], spec: TopologySpec = loadTopology(),
  hosts: HostLayout = SINGLE_HOST,
): NodeSpec[] {
  if (hosts.count > 1 && families.includes('IPv6')) {
    throw kdpError('KDP_CONFIG', '--hosts: several simulated hosts carry IPv4 only (use --ip-family ipv4)');
  }
  if (!Number.isInteger(count) || count < 1 || count > 250) {
    throw kdpError('KDP_CONFIG', `--nodes: ${count} is not between 1 and 250`);
  }
  return Array.from({ length: count }, (_, i) => {
    const ip = nodeIPOnHosts(spec, hosts, i);
    if (hosts.count > 1) return { name: `n${i + 1}`, ip, host: hostOfNode(hosts, i) };
    if (!families.includes('IPv6')) return { name: `n${i + 1}`, ip };
    const ip6 = nodeIP6(spec, i);
    if (!ip6) throw kdpError('KDP_CONFIG', 'an IPv6 cluster needs underlay.cidr6 in the topology');
    return { name: `n${i + 1}`, ip, ip6, ips: families.map((f) => (f === 'IPv6' ? ip6 : ip)) };
  });
}

/** The node's kubelet API on its InternalIP:10250 inside its namespace (as a node's kubelet
 *  listens on the node), authorising each request with a SubjectAccessReview. */
async function serveKubeletApi(
  netns: NetnsDataPlane, node: NodeSpec, agent: NodeAgent, runtime: Runtime | EphemeralRuntime, client: KClient,
  tls: KubeletServing, monitor: NodeMonitor | undefined, logStore: string,
): Promise<() => void> {
  const server = buildNodeKubeletServer({ nodeName: node.name, tls, client, agent: () => agent, runtime, logStore,
    streaming: netnsStreaming(runtime, (uid) => podNetnsName(netns.topo.prefix, uid), netns.sockets),
    monitor: () => monitor });
  const listener = await netns.listenInNode(node.name, node.ip, KUBELET_PORT);
  listener.on('connection', (s) => server.emit('connection', s));
  return () => { listener.close(); server.close(); };
}

export const KUBELET_PORT = 10250;

/** The kubelet's clusterDNS (the kube-dns Service's IPs: kdp up's DNS addon; none without it),
 *  clusterDomain cluster.local and its resolvConf's text (undefined for ''), for each pod's
 *  resolv.conf. */
async function kubeletDns(client: KClient, resolvConf: string) {
  const svc = await client.get<KubeObject & { spec?: { clusterIPs?: string[] } }>(
    { group: '', version: 'v1', resource: 'services', namespace: 'kube-system' }, 'kube-dns').catch(() => undefined);
  let hostResolvConf: string | undefined;
  if (resolvConf) {
    try { hostResolvConf = readFileSync(resolvConf, 'utf8'); } catch { hostResolvConf = ''; /* none: no host resolver */ }
  }
  return { clusterDNS: (svc?.spec?.clusterIPs ?? []).filter((ip) => ip && ip !== 'None'), clusterDomain: 'cluster.local',
    hostResolvConf };
}

export function buildNodeSet(o: NodeSetOptions): NodeSet {
  const running = new Map<string, Running>();
  const failed = new Map<string, NodeFailure>();
  /** Each running node's runtime endpoint (crictl's socket), closed with its agents. */
  const runtimeEndpoints = new Map<string, () => Promise<void>>();
  const stopAgents = async (name: string) => {
    const closeRuntime = runtimeEndpoints.get(name);
    runtimeEndpoints.delete(name);
    await closeRuntime?.();
    const r = running.get(name);
    if (!r) return;
    running.delete(name);
    r.closeMetrics?.();
    r.closeKubelet?.();
    o.monitors?.detach(name);
    r.netpol.stop();
    r.proxy?.stop();
    await r.agent.stop();
    await r.components?.stopComponents();
  };
  return {
    async start(node) {
      if (running.has(node.name)) return;
      const was = failed.get(node.name);
      // A crashed node boots in startNode (it knows the node crashed, and makes its link anew);
      // a partitioned one gets its link back first, so the agents' first sync sees it whole.
      if (o.netns && was === 'partitioned') await o.netns.setUplink(node.name, true);
      const clients = o.clientsFor ? await o.clientsFor(node.name)
        : { kubelet: o.client, kubeProxy: o.client };
      const kubeletClient = clients.kubelet;
      // The node's containers' output as CRI log files under <dataDir>/nodes/<node>/pods/.
      const logStore = fileLogStore(nodeDirOf(o.dataDir, node.name));
      let netpolRef: NetpolController | undefined;
      const started = o.netns
        ? await o.netns.startNode(node, o.proxyMode, { timeScale: o.timeScale,
          lookup: (namespace, resource, name) => kubeletClient.get<KubeObject & { data?: Record<string, string> }>(
            { group: '', version: 'v1', resource, namespace }, name)
            .then((x) => x.data ?? {}, (e: { code?: string }) => {
              if (e.code === 'KDP_NOT_FOUND') return undefined;
              throw e;
            }),
          dns: () => kubeletDns(kubeletClient, o.resolvConf ?? '/etc/resolv.conf'),
          apiService: () => kubeletClient.get<KubeObject & { spec?: { clusterIP?: string; ports?: Array<{ name?: string; port: number }> } }>(
            { group: '', version: 'v1', resource: 'services', namespace: 'default' }, 'kubernetes')
            .then((svc) => svc.spec?.clusterIP ? { host: svc.spec.clusterIP,
              port: (svc.spec.ports?.find((p) => p.name === 'https') ?? svc.spec.ports?.[0])?.port ?? 443 } : undefined),
          volumeFiles: (pod, volume) => volumeFiles({ client: kubeletClient }, pod, volume), logStore,
          // A new pod's NetworkPolicy verdicts are in the kernel before its containers start.
          beforeContainers: (pod, ips) => netpolRef?.programPod(pod, ips) ?? Promise.resolve() })
        : { runtime: buildVirtualRuntime({ timeScale: o.timeScale, logStore }), applier: buildMemoryApplier(o.proxyMode) };
      // The CNI's policy agent: the node's NetworkPolicy table, in the node's namespace (netns)
      // or in memory (virtual). Started before the kubelet, which calls it for every new pod.
      const netpolApplier = o.netns ? buildKernelNetpolApplier(o.netns.exec, o.netns.topo.nodeNetns(node.name))
        : buildMemoryNetpolApplier();
      const netpol = buildNetpolController({ nodeName: node.name, nodeIPs: nodeIPsOf(node),
        informers: o.informers, applier: netpolApplier,
        onError: (e) => o.onError(`netpol ${node.name}`, e),
        onApplied: (text) => writeNetpolTable(rulesDir(o.dataDir, node.name), text) });
      await netpol.start();
      netpolRef = netpol;
      const netnsPlane = o.netns;
      // Where pods run processes, kubectl debug's ephemeral containers run too.
      const plane = netnsPlane
        ? { ...started, runtime: withEphemeral(started.runtime, (uid) => podNetnsName(netnsPlane.topo.prefix, uid)) }
        : started;
      const components = o.componentsAsPods ? withHostComponents(plane.runtime, {
        nodeIPs: nodeIPsOf(node), timeScale: o.timeScale,
        onError: (pod, e) => o.onError(`${pod.metadata.namespace}/${pod.metadata.name} on ${node.name}`, e),
        components: {
          'kube-proxy': kubeProxyComponent({ nodeName: node.name, nodeIPs: nodeIPsOf(node), client: clients.kubeProxy,
            configMap: (namespace, name) => kubeletClient.get<KubeObject & { data?: Record<string, string> }>(
              { group: '', version: 'v1', resource: 'configmaps', namespace }, name)
              .then((x) => x.data ?? {}, (e: { code?: string }) => {
                if (e.code === 'KDP_NOT_FOUND') return undefined;
                throw e;
              }),
            informers: o.informers, dataDir: o.dataDir, timeScale: o.timeScale, netns: o.netns,
            onError: (e) => o.onError(`kube-proxy ${node.name}`, e), log: o.log }),
          cni: kdpCniComponent({ nodeName: node.name, informers: o.informers, netns: o.netns, client: kubeletClient,
            onError: (e) => o.onError(`kdp-cni ${node.name}`, e) }),
        },
      }) : undefined;
      // The store holding the node's journal (its kubelet's `/logs/?query=`).
      const journal = o.nodeLogStore?.(node.name) ?? logStoreDir(o.dataDir);
      // A virtual node's kubelet API: a free loopback port, published when the node registers.
      let agentRef: NodeAgent | undefined;
      let monitorRef: NodeMonitor | undefined;
      const loopKubelet = !o.netns && o.kubeletTls ? await listenOnLoopback(buildNodeKubeletServer({
        nodeName: node.name, tls: await o.kubeletTls(node), client: clients.kubelet, agent: () => agentRef, logStore: journal,
        runtime: components ?? plane.runtime, monitor: () => monitorRef })) : undefined;
      const agent = buildNodeAgent({
        client: clients.kubelet, nodeName: node.name,
        runtime: components ?? plane.runtime,
        options: { nodeIPs: nodeIPsOf(node), timeScale: o.timeScale,
          ...(loopKubelet ? { kubeletPort: loopKubelet.port } : {}) },
      });
      agentRef = agent;
      await agent.start().catch((e) => { loopKubelet?.close(); netpol.stop(); throw e; });
      const monitor = o.monitors?.attach(node.name, { pods: () => agent.pods?.() ?? [] }, plane.runtime);
      monitorRef = monitor;
      const proxy = components ? undefined : await buildKubeProxy({
        client: clients.kubeProxy, nodeName: node.name, nodeIPs: nodeIPsOf(node),
        mode: o.proxyMode,
        configText: o.kubeProxyConfig, applier: plane.applier,
        history: new RuleHistory(rulesDir(o.dataDir, node.name)), informers: o.informers,
        timeScale: o.timeScale, onError: (e) => o.onError(`kube-proxy ${node.name}`, e), log: o.log,
      });
      await proxy?.start();
      // As a real kube-proxy: /metrics on metricsBindAddress in the node's own network.
      const { host, port } = proxy?.metricsAddress ?? { host: '', port: 0 };
      const closeMetrics = o.netns && proxy && port > 0
        ? serveMetrics(await o.netns.listenInNode(node.name, host, port), proxy.metrics.registry) : undefined;
      const closeKubelet = o.netns && o.kubeletTls
        ? await serveKubeletApi(o.netns, node, agent, plane.runtime, clients.kubelet, await o.kubeletTls(node), monitor, journal)
        : loopKubelet?.close;
      // The node's runtime endpoint (`kdp crictl`), as containerd's socket beside a kubelet.
      await serveNodeRuntimeEndpoint({ dataDir: o.dataDir, nodeName: node.name, runtime: plane.runtime,
        ...(netnsPlane ? { streaming: netnsStreaming(plane.runtime,
          (uid) => podNetnsName(netnsPlane.topo.prefix, uid), netnsPlane.sockets) } : {}) })
        .then((close) => { runtimeEndpoints.set(node.name, close); },
          (e) => o.onError(`runtime endpoint ${node.name}`, e));
      running.set(node.name, { agent, proxy, components, closeMetrics, closeKubelet, netpol, netpolApplier });
      failed.delete(node.name);
    },
    async stop(name) {
      if (!running.has(name)) return;
      await stopAgents(name);
      failed.set(name, 'stopped');
    },
    async fail(name, how) {
      const was = running.has(name) ? 'running' : failed.get(name);
      if (was === undefined) throw kdpError('KDP_NOT_FOUND', `node ${name} is not running here`);
      if (was === how || was === 'crashed') return;
      await stopAgents(name);
      if (o.netns && how === 'crashed') await o.netns.crashNode(name);
      else if (o.netns && how === 'partitioned') await o.netns.setUplink(name, false);
      else if (o.netns && was === 'partitioned') await o.netns.setUplink(name, true);
      failed.set(name, how);
    },
    isRunning: (name) => running.has(name),
    stateOf: (name) => (running.has(name) ? 'running' : failed.get(name)),
    async stopAll() {
      for (const name of [...running.keys()]) await this.stop(name);
    },
    netpolTable: async (name) => running.get(name)?.netpolApplier.list(),
    netpolSynced: async (name) => running.get(name)?.netpol.synced(),
  };
}
