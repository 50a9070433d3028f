// One node's agents as their own process (`kdp node --name N`), joining a cluster over HTTPS with
// the node's own certificates: the same node set `kdp up` runs its nodes with (node-set.ts), so a
// joined node is what an in-process one is — kubelet, kube-proxy (or the kube-proxy and kdp-cni
// DaemonSets' pods, when the cluster has them, as a node kubeadm joins runs them), policy agent,
// kubelet API, runtime endpoint. Its data plane is its cluster's: beside a `sudo kdp up` running
// in netns mode in the same data dir, the node gets a namespace on that cluster's underlay, real
// pod processes and kernel rules, and its kubelet API on its InternalIP:10250 there, where the
// API server dials it; otherwise (a virtual `kdp up`, `kdp apiserver`) the virtual runtime, and
// the kubelet API on a loopback port published in the Node. A `kdp node join` run inside a
// simulated host's namespace (`simulatedHost`) is a netns node of that lab without its data dir.

import { requestKubeletServing } from '../bootstrap/kubelet-serving.js';
import { buildInformerFactory } from '../client/informer.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import type { KubeletServing } from '../kubelet/server/kubelet-server.js';
import type { Client, KubeObject } from '../client/types.js';
import type { Node } from '../api/types.js';
import { kdpError } from '../errors.js';
import { loadTopology, nodeIP, nodeIP6 } from '../host/topology.js';
import { hostUnderlay, type SimulatedHost } from '../host/hosts.js';
import { addToIP, cidrContains } from '../api/net.js';
import { usesVxlan } from '../cni/backend.js';
import { VXLAN_OVERHEAD } from '../host/vxlan.js';
import { buildNodeMonitors } from '../metrics/node-monitor.js';
import type { ProxyMode } from '../proxy/backend.js';
import type { ClusterInfo } from './cluster-file.js';
import type { DataDirPaths } from './data-dir.js';
import { startNetnsDataPlane, type NetnsDataPlane } from './data-plane-netns.js';
import { nodeProcessClients, nodeProcessKubeletTls, type NodeClients } from './node-identity.js';
import { buildNodeSet, type NodeSpec } from './node-set.js';
import { startNodeLogging } from './node-logging.js';
import { readPodNetwork } from './addons/kdp-cni.js';
import { claimUnderlayAddress } from './underlay-claims.js';
import { recordNodeAgent } from './node-agent-records.js';
import { defaultKubeProxyConfig } from './up.js';

export interface NodeProcessOptions {
  readonly paths: DataDirPaths;
  readonly kubeconfig: string;
  /** The kubeconfig's client (the informers, and the node's identity without the CA key). */
  readonly client: Client;
  readonly name: string;
  /** `--node-ip` as given; default: a free underlay address (netns), 172.18.0.2 (virtual). */
  readonly nodeIPs?: readonly string[];
  readonly proxyMode: ProxyMode;
  readonly kubeProxyConfig?: string;
  /** Multiplier of every timer (1 / --time-scale). */
  readonly factor: number;
  /** The `kdp up` running in the data dir, if any: its data plane is the node's. */
  readonly cluster?: ClusterInfo;
  readonly log: (line: string) => void;
  /** The kubelet's and kube-proxy's own clients (`kdp node join`: the node's certificate and the
   *  node agents' ServiceAccount token); default: from the data dir's CA, else `client`. */
  readonly clients?: NodeClients;
  /** `--host K` (0-based here): the simulated host of a `kdp up --hosts N` cluster whose underlay
   *  the node attaches to (host/hosts.ts); default the first. */
  readonly host?: number;
  /** upstream's `serverTLSBootstrap: true`: without the CA key, the kubelet asks for its serving
   *  certificate by a kubelet-serving CSR as `clients.kubelet` (bootstrap/kubelet-serving.ts)
   *  and serves its API once issued; otherwise such a node serves none. */
  readonly serverTlsBootstrap?: boolean;
  /** Without a `kdp up` in the data dir: the simulated host this process runs in (`kdp sh hK --
   *  kdp node join`, host/hosts.ts). The node is a netns node of that lab, on that host's
   *  underlay, its kernel objects named with the lab's prefix; the pod network (pod CIDRs,
   *  backend) comes from the cluster's kdp-cni DaemonSet. Lab-only: a machine of its own has no
   *  simulated host around it. */
  readonly simulatedHost?: SimulatedHost;
}

export interface NodeProcess {
  readonly node: NodeSpec;
  readonly dataPlane: 'netns' | 'virtual';
  /** Whether kube-proxy runs as the node's kube-proxy DaemonSet pod. */
  readonly componentsAsPods: boolean;
  close(): Promise<void>;
}

const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const DAEMONSETS = { group: 'apps', version: 'v1', resource: 'daemonsets', namespace: 'kube-system' } as const;

/** The first underlay address (IPv4, and IPv6 on an IPv6 cluster) no Node has as its InternalIP
 *  and no other joining node process has claimed (`taken`, underlay-claims.ts). */
async function freeUnderlayAddress(client: Client, taken: ReadonlySet<string>, v6: boolean, hostCIDR?: string): Promise<{ ip: string; ip6?: string }> {
  const spec = loadTopology();
  const used = new Set((await client.list<Node>(NODES)).items
    .flatMap((n) => (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address)));
  for (const ip of taken) used.add(ip);
  for (let i = 0; i < 250; i++) {
    // On a simulated host of a routed layout: its own subnet, numbered as kdp up numbers it.
    const ip = hostCIDR ? addToIP(hostCIDR.split('/')[0]!, spec.underlay.firstNodeHost + i) : nodeIP(spec, i);
    const ip6 = v6 ? nodeIP6(spec, i) : undefined;
    if (!used.has(ip) && !(ip6 && used.has(ip6))) return { ip, ...(ip6 ? { ip6 } : {}) };
  }
  throw kdpError('KDP_CONFIG', '--node-ip: no free underlay address left');
}

export async function startNodeProcess(o: NodeProcessOptions): Promise<NodeProcess> {
  const lab = o.cluster ? undefined : o.simulatedHost;
  const netnsCluster = o.cluster?.mode === 'netns' || lab !== undefined;
  if (netnsCluster && process.getuid?.() !== 0) {
    throw kdpError('KDP_CONFIG', `the cluster in ${o.paths.root} runs in netns mode: its nodes create network `
      + 'namespaces: run `kdp node` as root (sudo)');
  }
  const families = o.cluster?.ipFamily ?? 'ipv4';
  const hosts = o.cluster?.hosts ?? lab?.layout;
  const podNetwork = lab ? await readPodNetwork(o.client) : undefined;
  const clusterCIDRs = o.cluster?.clusterCIDRs ?? (podNetwork?.clusterCIDRs.length ? podNetwork.clusterCIDRs : undefined);
  const backend = o.cluster?.backend ?? podNetwork?.backend;
  const hostIndex = o.host ?? lab?.index;
  if (o.host !== undefined && (!netnsCluster || !Number.isInteger(o.host) || o.host < 0 || o.host >= (hosts?.count ?? 1))) {
    throw kdpError('KDP_CONFIG', `--host: ${o.host + 1} is not a simulated host of the cluster in ${o.paths.root} `
      + `(it has ${netnsCluster ? hosts?.count ?? 1 : 'none: not netns mode'})`);
  }
  const host = netnsCluster && hosts && hosts.count > 1 ? hostUnderlay(loadTopology(), '', hosts, hostIndex ?? 0) : undefined;
  let node: NodeSpec;
  let releaseClaim: (() => void) | undefined;
  if (o.nodeIPs?.length) {
    const v4 = o.nodeIPs.find((ip) => !ip.includes(':'));
    const v6 = o.nodeIPs.find((ip) => ip.includes(':'));
    if (netnsCluster && !v4) throw kdpError('KDP_CONFIG', '--node-ip: a netns node needs an IPv4 underlay address');
    node = { name: o.name, ip: v4 ?? o.nodeIPs[0]!, ...(v6 && v4 ? { ip6: v6 } : {}), ips: [...o.nodeIPs] };
  } else if (netnsCluster) {
    const claim = await claimUnderlayAddress(o.paths.root, o.name,
      (taken) => freeUnderlayAddress(o.client, taken, families !== 'ipv4', host?.cidr));
    releaseClaim = claim.release;
    const free = claim.choice;
    const ips = families === 'ipv6' ? [free.ip6!] : families === 'dual' ? [free.ip, free.ip6!] : [free.ip];
    node = { name: o.name, ...free, ips, ...(host ? { host: host.index } : {}) };
  } else {
    node = { name: o.name, ip: '172.18.0.2' };
  }
  const componentsAsPods = await o.client.get<KubeObject>(DAEMONSETS, 'kube-proxy')
    .then(() => true, (e: { code?: string }) => {
      if (e.code === 'KDP_NOT_FOUND') return false;
      throw e;
    });
  const closers: Array<() => Promise<void> | void> = [];
  if (releaseClaim) closers.push(releaseClaim);
  // `kdp down` stops this process by its record, also after a crash (node-agent-records.ts).
  closers.push(recordNodeAgent(o.paths.root, o.name));
  const close = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    let netns: NetnsDataPlane | undefined;
    if (netnsCluster) {
      if (host && !cidrContains(host.cidr, node.ip)) {
        throw kdpError('KDP_CONFIG', `--node-ip: ${node.ip} is not on host ${host.index + 1}'s subnet ${host.cidr}`);
      }
      if (host) node = { ...node, host: host.index };
      netns = await startNetnsDataPlane(o.paths, undefined, { clusterCIDRs,
        ...(hosts ? { hosts } : {}), ...(backend && usesVxlan(backend) ? { mtu: 1500 - VXLAN_OVERHEAD } : {}) },
        { node: o.name, ...(lab ? { clusterId: lab.clusterId } : {}) });
      const plane = netns;
      closers.push(() => plane.close());
    }
    const tls = await nodeProcessKubeletTls(o.paths.root, o.name, node.ips ?? [node.ip])
      ?? (o.serverTlsBootstrap && o.clients ? bootstrapServing(o, o.clients.kubelet, node.ips ?? [node.ip], closers)
        : undefined);
    if (!tls) o.log(`no cluster CA key in ${o.paths.root}/pki: serving no kubelet API (no logs)`);
    const informers = buildInformerFactory(o.client);
    closers.push(() => informers.stop());
    // On a data dir of its own: the node's journal, shipped to the cluster's log store.
    const logging = startNodeLogging({ dataDir: o.paths.root, node: o.name, kubeconfig: o.kubeconfig,
      client: o.clients?.kubelet ?? o.client, clusterHere: o.cluster !== undefined, log: o.log });
    if (logging) closers.push(() => logging.stop());
    const nodeSet = buildNodeSet({
      client: o.client, dataDir: o.paths.root, proxyMode: o.proxyMode,
      ...(logging ? { nodeLogStore: () => logging.storeDir } : {}),
      kubeProxyConfig: o.kubeProxyConfig ?? (clusterCIDRs ? defaultKubeProxyConfig(clusterCIDRs) : undefined),
      timeScale: o.factor, informers, netns,
      onError: (where, e) => o.log(`${where}: ${(e as Error).message}`), log: o.log,
      clientsFor: async () => o.clients ?? nodeProcessClients(o.kubeconfig, o.paths.root, o.name, o.client, o.log),
      ...(tls ? { kubeletTls: async () => tls } : {}),
      monitors: buildNodeMonitors(),
      componentsAsPods,
    });
    // Without the kdp-cni DaemonSet's pods (which keep them), this process keeps its node's
    // host-gw routes to the other nodes' pod CIDRs (kdp up keeps theirs to this node's).
    if (netns && !componentsAsPods) netns.watchRoutes(informers, (e) => o.log(`routes: ${(e as Error).message}`));
    closers.push(() => nodeSet.stopAll());
    informers.start();
    await nodeSet.start(node);
    return { node, dataPlane: netns ? 'netns' : 'virtual', componentsAsPods, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The kubelet-serving CSR in the background (stopped by `closers`): the CA of the kubelet's
 *  clients now (the kubeconfig's), the serving pair once issued. */
function bootstrapServing(o: NodeProcessOptions, kubelet: Client, nodeIPs: readonly string[],
  closers: Array<() => Promise<void> | void>): KubeletServing {
  const caPem = loadKubeconfig(o.kubeconfig).caPem;
  if (!caPem) throw kdpError('KDP_CONFIG', `${o.kubeconfig}: no certificate-authority-data for the kubelet's clients`);
  const abort = new AbortController();
  closers.push(() => abort.abort());
  const issued = requestKubeletServing({ client: kubelet, nodeName: o.name, nodeIPs, signal: abort.signal, log: o.log });
  issued.catch((e: Error) => { if (!abort.signal.aborted) o.log(`kubelet serving certificate: ${e.message}`); });
  return { caPem, issued };
}

/** Says what runs, waits for `interrupted`, then stops the node (`kdp node`, `kdp node join`). */
export async function runNodeUntilInterrupted(node: NodeProcess, o: { name: string; proxyMode: ProxyMode;
  interrupted: Promise<void>; err(text: string): void }): Promise<void> {
  o.err(`kdp node ${o.name} (${(node.node.ips ?? [node.node.ip]).join(', ')}) running: kubelet (${node.dataPlane} runtime) + `
    + `${node.componentsAsPods ? 'kube-proxy and kdp-cni as the DaemonSets\' pods' : `kube-proxy (${o.proxyMode})`}\n`);
  await o.interrupted;
  // Shutdown waits on helper processes that do not hold the event loop open; this timer does.
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    await node.close();
  } finally {
    clearInterval(keepAlive);
  }
}
