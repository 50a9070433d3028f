// `kdp up`: the whole cluster in one process over the in-process client — API server,
// controller manager, scheduler and N node agents (kubelet + kube-proxy). Without root (or with
// --virtual) the data plane is virtual: rules are compiled and kept per node, no kernel objects.
// With `dataPlane: 'netns'` (root) nodes and pods are network namespaces and kube-proxy's rules
// go into the kernel (data-plane-netns.ts); closing removes every kernel object it made.

import { rmSync } from 'node:fs';
import { writePrivateFileSync } from '../util/private-files.js';
import { ipFamilyOf } from '../api/net.js';
import { ADMIN_USER } from '../apiserver/app.js';
import { startApiServer, type RunningApiServer } from '../apiserver/start.js';
import { buildInformerFactory } from '../client/informer.js';
import { buildInProcessClient } from '../client/in-process.js';
import { renderKubeconfig } from '../client/kubeconfig.js';
import type { Client } from '../client/types.js';
import { buildControllerManager, type ControllerManager } from '../controllers/manager.js';
import { buildLbPool, DEFAULT_LB_CIDR, parseLbCidrs } from '../controllers/service-lb/pool.js';
import { netnsLbAddresses, startLbSpeaker } from './lb-speaker.js';
import { issueKubeletServing } from '../kubelet/server/serve.js';
import type { Node } from '../api/types.js';
import type { ProxyMode } from '../proxy/backend.js';
import { readApplyStatus, rulesDir } from '../proxy/history.js';
import { kdpError } from '../errors.js';
import { buildScheduler, type Scheduler } from '../scheduler/scheduler.js';
import { writeClusterInfo } from './cluster-file.js';
import { ensureDataDir, type DataDirPaths } from './data-dir.js';
import type { StoreStartOptions } from '../store/options.js';
import { writePidFile } from './daemon.js';
import { buildInProcessNodeClients } from './node-identity.js';
import { caOf } from '../apiserver/pki/index.js';
import { buildNodeSet, nodeIPsOf, nodeSpecs, type NodeSet, type NodeSpec } from './node-set.js';
import { resolveClusterNetwork, type ClusterNetwork } from './network.js';
import type { ControllerOptions } from '../controllers/options.js';
import { loadTopology } from '../host/topology.js';
import { superviseAgents } from './agent-supervisor.js';
import { startLocalEtcd } from './etcd-cluster.js';
import { startReplica, type Replica } from './apiserver-replicas.js';
import { startTcpBalancer } from './tcp-balancer.js';
import { controlPlanePods, markControlPlane } from './control-plane-pods.js';
import { buildMirrorPodKeeper } from '../kubelet/static-pods.js';
import type { EtcdStoreOptions } from '../store/etcd-store.js';
import { buildNetnsAnnotationPlugin } from './netns-annotation.js';
import { listenOnUnderlay, netnsBackendDialer } from './netns-reach.js';
import { netnsSockets, type NetnsSockets } from '../host/netns-socket.js';
import { startNetnsDataPlane, type CniNetworkOptions, type NetnsDataPlane } from './data-plane-netns.js';
import { assertKernelMode } from '../proxy/kernel-applier.js';
import { ensureDnsAddon } from './addons/dns.js';
import { dnsServiceIP } from '../api/service-cidr.js';
import { startLogCollection, type LogCollection } from '../logging/collector.js';
import { buildClusterMonitoring, METRIC_RESOLUTION_MS, startClusterPrometheus } from '../metrics/cluster-monitoring.js';
import { ensureKubeProxyAddon, ensureObjects, kubeProxyConfigConf } from './addons/kube-proxy.js';
import { kdpCniAddonObjects } from './addons/kdp-cni.js';
import { SINGLE_HOST, type HostLayout } from '../host/hosts.js';
import { usesVxlan, type Backend } from '../cni/backend.js';
import { VXLAN_OVERHEAD } from '../host/vxlan.js';
import { buildNetnsLabCloud, buildVirtualLabCloud } from './lab-cloud.js';
import { waitForDaemonSets } from './addons/wait-daemonsets.js';
import { ensureInitToken, joinCommand as formatJoinCommand } from '../bootstrap/token-store.js';
import { etcdHealth, etcdStaticPods } from './etcd-pods.js';
import type { EtcdLayout } from './etcd-cluster.js';

export interface UpOptions {
  readonly paths: DataDirPaths;
  readonly nodes: number;
  readonly port: number;
  readonly proxyMode: ProxyMode;
  readonly kubeProxyConfig?: string;
  /** The CLI's --time-scale: every control-loop timer is divided by it (10: ten times faster). */
  readonly timeScale: number;
  readonly progress: (line: string) => void;
  /** Default 'virtual'. 'netns' needs root. */
  readonly dataPlane?: 'virtual' | 'netns';
  /** netns mode: the pods' CNI network (`--cni-conf-dir`, `--cni-bin-dir`). */
  readonly cni?: CniNetworkOptions;
  /** IP families and ranges (`--ip-family`, `--cluster-cidr`, `--service-cidr`); default IPv4
   *  10.244.0.0/16 and 10.96.0.0/12. */
  readonly network?: ClusterNetwork;
  /** Passed to the embedded store (`--repair`; recovery's log lines). */
  readonly store?: StoreStartOptions;
  /** Objects in etcd: a local cluster of this many members (`--etcd N`), or these servers. */
  readonly etcd?: number | EtcdStoreOptions;
  /** The cluster DNS addon (kube-system/coredns, kube-dns Service); default true (`--no-dns`). */
  readonly dns?: boolean;
  /** The cluster log store's size bound in bytes (`--log-store-size`); default 256 MiB. */
  readonly logStoreBytes?: number;
  /** `--prometheus`: write a scrape config and run Debian's prometheus on 127.0.0.1:port. */
  readonly prometheus?: { readonly port: number };
  /**
   * kube-proxy and the pod network as kubeadm leaves them (`kdp up`): the kube-system DaemonSets
   * `kube-proxy` (its ConfigMap's config.conf from proxyMode/kubeProxyConfig) and `kdp-cni`,
   * whose pods the kubelets run (node-set.ts componentsAsPods). Default false: each node's
   * kube-proxy and routes are started with the node, without pods.
   */
  readonly systemPods?: boolean;
  /** API servers behind one address (`--apiservers N`, needs `etcd` as a number): this
   *  process's and N-1 `kdp apiserver` replicas, with kdp's TCP balancer on `port`. */
  readonly apiservers?: number;
  /** The lab cloud (`--cloud-provider`, `--lb-cidr`): LoadBalancer addresses from the pool; in
   *  netns mode one node answers ARP for each on the underlay (lb-speaker.ts). */
  readonly cloud?: { readonly cloudProvider?: 'kdp' | 'none'; readonly lbCIDR?: string };
  /** kubeadm's NoSchedule taint on the control-plane node n1 (`--control-plane-taint`; off by
   *  default so that a two-node lab schedules onto both nodes). */
  readonly controlPlaneTaint?: boolean;
  /** netns mode: nodes spread over simulated hosts (`--hosts`, `--host-link`; host/hosts.ts). */
  readonly hosts?: HostLayout;
  /** The pod network between nodes (`--backend`, cni/backend.ts); default host-gw. Other than
   *  host-gw needs systemPods (the kdp-cni agents run it). */
  readonly backend?: Backend;
  /** The kubelets' resolvConf (node-set.ts): default /etc/resolv.conf; '' none, so that the
   *  coredns pods forward nowhere and names outside the cluster are REFUSED at once. */
  readonly resolvConf?: string;
}

export interface RunningCluster {
  /** The cluster's address (the balancer's with several API servers). */
  readonly url: string;
  /** Each API server's own address, this process's first. */
  readonly apiServers: readonly string[];
  readonly client: Client;
  readonly nodes: readonly NodeSpec[];
  readonly nodeSet: NodeSet;
  /** `kdp node join URL --token T --discovery-token-ca-cert-hash sha256:H` for other hosts, as
   *  `kubeadm init` prints it (bootstrap/token-store.ts). */
  readonly joinCommand: string;
  close(): Promise<void>;
}

const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

export async function startCluster(o: UpOptions): Promise<RunningCluster> {
  await ensureDataDir(o.paths.root, o.progress);
  writePidFile(o.paths.pidFile);
  const closers: Array<() => Promise<void> | void> = [];
  const running = { scheduler: false, manager: false };
  const close = async () => {
    for (const c of closers.reverse()) await c();
    rmSync(o.paths.pidFile, { force: true });
    rmSync(o.paths.clusterFile, { force: true });
  };
  // Components take a multiplier (their durations × timeScale); the flag is a speed-up.
  const factor = 1 / o.timeScale;
  const mode = o.dataPlane ?? 'virtual';
  const net = o.network ?? resolveClusterNetwork();
  const topoSpec = loadTopology();
  const hosts = o.hosts ?? SINGLE_HOST;
  const backend = o.backend ?? 'host-gw';
  try {
    if (mode === 'netns') assertKernelMode(o.proxyMode);
    if (hosts.count > 1 && mode !== 'netns') throw kdpError('KDP_CONFIG', '--hosts: simulated hosts are netns mode\'s (run as root)');
    if (hosts.count > 1 && net.families.includes('IPv6')) {
      throw kdpError('KDP_CONFIG', '--hosts: several simulated hosts carry IPv4 only (use --ip-family ipv4)');
    }
    if (backend !== 'host-gw' && !o.systemPods) {
      throw kdpError('KDP_CONFIG', `--backend ${backend}: the kdp-cni agents run it (system pods)`);
    }
    let netns: NetnsDataPlane | undefined;
    let sockets: NetnsSockets | undefined;
    if (mode === 'netns') {
      o.progress('netns data plane: underlay namespace and bridge');
      netns = await startNetnsDataPlane(o.paths, undefined, { ...o.cni, clusterCIDRs: net.clusterCIDRs, hosts,
        ...(usesVxlan(backend) ? { mtu: 1500 - VXLAN_OVERHEAD } : {}) });
      if (hosts.count > 1) {
        o.progress(`${hosts.count} simulated hosts (${hosts.link}): ${Array.from({ length: hosts.count },
          (_, k) => { const h = netns!.topo.hosts.underlay(k); return `${h.name} ${h.cidr}`; }).join(', ')}`);
      }
      o.progress(netns.echo.native ? `workload: native kdp/echo (${netns.echo.file})`
        : `workload: JS kdp/echo (${netns.echo.reason ?? 'native build unavailable'})`);
      const plane = netns;
      closers.push(() => plane.close());
      const socks = sockets = netnsSockets();
      closers.push(() => socks.close());
      o.progress(`netns data plane: namespaces ${plane.topo.prefix}-*`);
    }
    const apiservers = o.apiservers ?? 1;
    if (!Number.isInteger(apiservers) || apiservers < 1 || apiservers > 7) {
      throw kdpError('KDP_CONFIG', `--apiservers: ${o.apiservers} is not between 1 and 7`);
    }
    if (apiservers > 1 && typeof o.etcd !== 'number') {
      throw kdpError('KDP_CONFIG', '--apiservers: several API servers need a store they share: add --etcd 1, 3 or 5');
    }
    let etcd: EtcdStoreOptions | undefined = typeof o.etcd === 'object' ? o.etcd : undefined;
    let etcdLayout: EtcdLayout | undefined;
    if (typeof o.etcd === 'number') {
      const local = await startLocalEtcd(o.paths.root, o.etcd, o.progress);
      closers.push(() => local.stop());
      // kube-apiserver's default --etcd-compaction-interval (5 min).
      etcd = { endpoints: [...local.endpoints], tls: local.tls, compactionIntervalMs: 5 * 60_000,
        onCompactionError: (e) => o.progress(`etcd compaction: ${(e as Error).message}`) };
      etcdLayout = local.layout;
    }
    // metrics-server's part: kubelets' resource usage, collected for metrics.k8s.io (kubectl top).
    const monitoring = buildClusterMonitoring({ realProcesses: mode === 'netns', intervalMs: METRIC_RESOLUTION_MS * factor,
      onError: (node, e) => o.progress(`metrics: scrape of ${node} failed: ${(e as Error).message}`) });
    o.progress(`starting API server (data dir ${o.paths.root})`);
    // The `kubernetes` Service points at the underlay gateway (of the primary service family),
    // where the host (and so the API server) sits for the nodes (DESIGN.md §4).
    const under = topoSpec.underlay;
    const v6Primary = ipFamilyOf(net.serviceCIDRs[0]!) === 'IPv6';
    // Joined nodes' shipped log records go to the collector started below.
    let ingest: LogCollection['ingest'] | undefined;
    const api: RunningApiServer = await startApiServer({
      dataDir: o.paths.root, port: apiservers > 1 ? 0 : o.port, store: o.store, etcd, logIngest: () => ingest,
      serviceCIDR: net.serviceCIDRs.join(','),
      advertiseAddress: (v6Primary ? under.gateway6 : under.gateway) ?? '172.18.0.1',
      admission: netns ? [buildNetnsAnnotationPlugin(netns.topo.prefix)] : [], serviceAccountAdmission: true,
      // The scheduler and controller manager run in this process: healthy once started.
      componentStatuses: async () => [
        { name: 'scheduler', healthy: running.scheduler, ...(running.scheduler ? { message: 'ok' } : { error: 'not started' }) },
        { name: 'controller-manager', healthy: running.manager,
          ...(running.manager ? { message: 'ok' } : { error: 'not started' }) },
        // Upstream lists every etcd server of its storage config: etcd-0, etcd-1, …
        ...(etcd ? await etcdHealth(etcd.endpoints, etcd.tls) : [])],
      backendDialer: netns && sockets ? netnsBackendDialer(sockets, netns.topo, () => nodes[0]?.name) : undefined,
      metricsApi: monitoring.collector,
    });
    closers.push(() => api.close());
    // HA: the other API servers on the same etcd, and one address in front of them all.
    let url = api.url;
    const apiServers = [api.url];
    if (apiservers > 1) {
      const replicas: Replica[] = [];
      closers.push(async () => { await Promise.all(replicas.map((r) => r.stop())); });
      for (let i = 2; i <= apiservers; i++) {
        replicas.push(await startReplica(`apiserver-${i}`, { dataDir: o.paths.root, etcdEndpoints: etcd!.endpoints,
          serviceCIDR: net.serviceCIDRs.join(','), admissionPlugins: ['ServiceAccount', ...(netns ? ['KdpPodNetns'] : [])],
          netns: !!netns, log: o.progress }));
      }
      apiServers.push(...replicas.map((r) => r.url));
      const backends = [{ host: '127.0.0.1', port: api.port }, ...replicas.map((r) => ({ host: '127.0.0.1', port: r.port }))];
      const lb = await startTcpBalancer({ port: o.port, backends: () => backends });
      closers.push(() => lb.close());
      url = `https://127.0.0.1:${lb.port}`;
      o.progress(`${apiservers} API servers (ports ${backends.map((b) => b.port).join(', ')}) behind ${url}`);
    }
    if (netns && sockets) {
      // Pods reach the API server as the `kubernetes` Service, whose endpoint is this address.
      const gw = (v6Primary ? under.gateway6 : under.gateway) ?? '172.18.0.1';
      closers.push(await listenOnUnderlay(sockets, netns.topo, gw, api.port, api.server.app.server));
      o.progress(`API server also on ${gw.includes(':') ? `[${gw}]` : gw}:${api.port} (the kubernetes Service's endpoint)`);
    }
    const client = buildInProcessClient(api.server.service, ADMIN_USER);
    const informers = buildInformerFactory(client);
    closers.push(() => informers.stop());
    // Cluster-level logging: pods' and components' lines into <data-dir>/logs (`kdp logs`).
    const logs = startLogCollection({ dataDir: o.paths.root, informers, apiServer: api.server.app.server,
      maxBytes: o.logStoreBytes,
      onError: (e) => o.progress(`logs: ${(e as Error).message}`) });
    closers.push(() => { ingest = undefined; logs.stop(); });
    ingest = logs.ingest;
    const agentLog = logs.tee(o.progress);
    // The lab cloud's route table and instances (route and cloud node lifecycle controllers).
    const nodeCache = informers.informerFor<Node>(NODES).cache;
    const labCloud = netns ? buildNetnsLabCloud({ plane: netns, nodes: () => nodeCache.list(),
      onError: (e) => o.progress(`lab cloud routes: ${(e as Error).message}`) }) : buildVirtualLabCloud();
    const manager: ControllerManager = buildControllerManager({ client, informers, options: {
      timeScale: factor, clusterCIDR: net.clusterCIDRs.join(','),
      serviceCIDR: net.serviceCIDRs.join(','), ...nodeMaskOptions(net),
      rootCaPem: api.pki.caCertPem, ...o.cloud, cloud: labCloud, clusterSigning: caOf(api.pki),
    } });
    const cloudRoutes = o.cloud?.cloudProvider !== 'none';
    if (netns && o.cloud?.cloudProvider !== 'none') {
      const pool = buildLbPool(parseLbCidrs(o.cloud?.lbCIDR ?? DEFAULT_LB_CIDR));
      const speaker = startLbSpeaker({ informers, addresses: netnsLbAddresses(netns.exec, netns.topo),
        inPool: (ip) => pool.contains(ip), onError: (e) => o.progress(`lb speaker: ${(e as Error).message}`) });
      closers.push(() => speaker.stop());
    }
    await manager.start();
    running.manager = true;
    closers.push(async () => { running.manager = false; await manager.stop(); });
    const scheduler: Scheduler = buildScheduler({ client, options: { timeScale: factor } });
    await scheduler.start();
    running.scheduler = true;
    closers.push(() => { running.scheduler = false; scheduler.stop(); });
    o.progress('control plane running: controller-manager, scheduler');
    if (o.dns !== false) {
      const created = await ensureDnsAddon(client, { serviceCIDRs: net.serviceCIDRs });
      o.progress(`cluster DNS: kube-system/coredns behind kube-dns ${dnsServiceIP(net.serviceCIDRs)}` +
        `${created.length ? '' : ' (kept from before)'}`);
    }
    const advertise = (v6Primary ? under.gateway6 : under.gateway) ?? '172.18.0.1';
    if (o.systemPods) {
      // kubeadm's addon phase: kube-proxy as a DaemonSet, and the pod network's (kindnet-style).
      const configConf = kubeProxyConfigConf(o.kubeProxyConfig ?? defaultKubeProxyConfig(net.clusterCIDRs), o.proxyMode);
      const made = [...await ensureKubeProxyAddon(client, { configConf,
        server: `https://${advertise.includes(':') ? `[${advertise}]` : advertise}:${api.port}` }),
      ...await ensureObjects(client, kdpCniAddonObjects({ clusterCIDRs: net.clusterCIDRs, backend,
        routes: cloudRoutes ? 'cloud' : 'agent' }))];
      o.progress(`kube-system DaemonSets kube-proxy (${o.proxyMode}) and kdp-cni${made.length ? '' : ' (kept from before)'}`);
    }
    const nodes = nodeSpecs(o.nodes, net.families, topoSpec, hosts);
    const nodeSet = buildNodeSet({
      client, dataDir: o.paths.root, proxyMode: o.proxyMode,
      kubeProxyConfig: o.kubeProxyConfig ?? defaultKubeProxyConfig(net.clusterCIDRs),
      timeScale: factor, informers,
      onError: (where, e) => agentLog(`${where}: ${(e as Error).message}`), log: agentLog, netns,
      clientsFor: buildInProcessNodeClients(api.server.service, o.paths.root, caOf(api.pki)),
      // Every node's kubelet API: netns nodes on InternalIP:10250, virtual ones on loopback.
      kubeletTls: (node) => issueKubeletServing(caOf(api.pki), node.name, nodeIPsOf(node)),
      monitors: monitoring.monitors,
      componentsAsPods: o.systemPods, resolvConf: o.resolvConf,
    });
    // The host-gw routes are the lab cloud's route controller's; without a cloud, with system
    // pods the kdp-cni pods keep them (as kindnet does), else the data plane does.
    if (!o.systemPods && !cloudRoutes) netns?.watchRoutes(informers, (e) => o.progress(`routes: ${(e as Error).message}`));
    closers.push(() => nodeSet.stopAll());
    informers.start();
    for (const n of nodes) {
      await nodeSet.start(n);
      o.progress(`node ${n.name} (${nodeIPsOf(n).join(', ')}) registered`);
    }
    const supervisor = superviseAgents(informers, nodeSet, nodes, o.progress);
    closers.push(() => supervisor.stop());
    await waitForReady(client, nodes, net.families, o.paths.root, o.progress);
    await monitoring.start(client, { url: api.url, caPem: api.pki.caCertPem, token: api.pki.adminToken });
    closers.push(() => monitoring.stop());
    if (o.systemPods) await waitForDaemonSets(client, 'kube-system', ['kube-proxy', 'kdp-cni'], o.progress);
    // The first node is the control-plane node, its components shown as kubeadm's static pods.
    const cp = nodes[0]!;
    await markControlPlane(client, cp.name, { taint: o.controlPlaneTaint });
    // The local etcd members as static pods too (etcd-pods.ts: member i on node i).
    const etcdPods = etcdLayout ? etcdStaticPods(o.paths.root, etcdLayout, nodes.map((n) => n.name)) : new Map();
    const nodeClients = buildInProcessNodeClients(api.server.service, o.paths.root, caOf(api.pki));
    for (const n of nodes) {
      const pods = [...(n === cp ? controlPlanePods({ advertiseAddress: advertise,
        securePort: api.port, serviceCIDRs: net.serviceCIDRs, clusterCIDRs: net.clusterCIDRs,
        etcdServers: etcd?.endpoints }) : []), ...(etcdPods.get(n.name) ?? [])];
      if (!pods.length) continue;
      const mirrors = buildMirrorPodKeeper({
        client: (await nodeClients(n.name)).kubelet,
        nodeName: n.name, nodeIPs: nodeIPsOf(n), periodMs: 10_000 * factor, pods,
        onError: (e) => o.progress(`mirror pods: ${(e as Error).message}`),
      });
      await mirrors.start();
      closers.push(async () => mirrors.stop());
    }
    // kubeadm init's bootstrap-token phase: cluster-info (signed by the bootstrapsigner) at the
    // address other hosts reach, a node token, and the join command printed as kubeadm prints it.
    const joinServer = netns ? `https://${advertise.includes(':') ? `[${advertise}]` : advertise}:${api.port}` : url;
    const joinCommand = formatJoinCommand(joinServer, await ensureInitToken(client, joinServer, api.pki.caCertPem),
      api.pki.caCertPem);
    o.progress(`join nodes from other hosts with: ${joinCommand}`);
    writePrivateFileSync(o.paths.kubeconfig, renderKubeconfig({ server: url, caPem: api.pki.caCertPem, token: api.pki.adminToken }), { atomic: true });
    writeClusterInfo(o.paths, {
      url, pid: process.pid, mode, proxyMode: o.proxyMode, nodes, kubeconfig: o.paths.kubeconfig,
      startedAt: new Date().toISOString(), timeScale: o.timeScale,
      ipFamily: net.ipFamily, clusterCIDRs: net.clusterCIDRs, serviceCIDRs: net.serviceCIDRs,
      ...(hosts.count > 1 ? { hosts } : {}), ...(backend !== 'host-gw' ? { backend } : {}),
    });
    if (o.prometheus) {
      closers.push(startClusterPrometheus({ dataDir: o.paths.root, apiServer: api.url, caPem: api.pki.caCertPem,
        token: api.pki.adminToken, nodes: nodes.map((n) => n.name), timeScale: factor, port: o.prometheus.port, client,
        progress: o.progress }));
    }
    return { url, apiServers, client, nodes, nodeSet, joinCommand, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The per-family node mask flags for the controller manager. */
function nodeMaskOptions(net: ClusterNetwork): ControllerOptions {
  const at = (f: string) => net.nodeCIDRMaskSizes[net.families.indexOf(f as 'IPv4' | 'IPv6')];
  return { nodeCIDRMaskSizeIPv4: at('IPv4'), nodeCIDRMaskSizeIPv6: at('IPv6') };
}

/**
 * Returns once every node is Ready and its kube-proxy has applied its first sync in every
 * family (a cluster whose rules never reached the kernel is not ready, whatever the nodes say).
 * A first apply that keeps failing (3 in a row) ends the start with the applier's error.
 */
export async function waitForReady(client: Client, nodes: readonly NodeSpec[], families: readonly string[],
  dataDir: string, progress: (l: string) => void): Promise<void> {
  const seen = new Set<string>();
  const applied = new Set<string>();
  for (;;) {
    const list = await client.list<Node>(NODES);
    for (const n of list.items) {
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      if (ready && !seen.has(n.metadata.name!)) {
        seen.add(n.metadata.name!);
        const cidrs = n.spec?.podCIDRs?.join(', ') ?? n.spec?.podCIDR ?? 'pending';
        const s = n.spec?.podCIDRs?.length === 2 ? 's' : '';
        progress(`node ${n.metadata.name} Ready (podCIDR${s} ${cidrs})`);
      }
    }
    for (const n of nodes) {
      if (applied.has(n.name)) continue;
      const statuses = readApplyStatus(rulesDir(dataDir, n.name));
      const failing = statuses.find((a) => a.failed && a.failures >= 3);
      if (failing) {
        throw kdpError('KDP_UNAVAILABLE', `node ${n.name}'s kube-proxy could not apply its ` +
          `${failing.family} rules (${failing.failures} attempts): ${failing.lastError?.message ?? ''}`);
      }
      if (families.every((f) => statuses.some((a) => a.family === f && !a.failed))) applied.add(n.name);
    }
    if (nodes.every((n) => seen.has(n.name) && applied.has(n.name))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The KubeProxyConfiguration every node gets when none is given: as kind writes it, with the
 * cluster's pod CIDRs as `clusterCIDR`, so detectLocalMode ClusterCIDR can tell traffic from
 * outside the cluster (upstream kube-proxy without it masquerades nothing for ClusterIPs).
 */
export function defaultKubeProxyConfig(clusterCIDRs: readonly string[]): string {
  return 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n'
    + `clusterCIDR: "${clusterCIDRs.join(',')}"\n`;
}
