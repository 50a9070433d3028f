// The netns data plane of a cluster (`sudo kdp up`): the underlay, one namespace per node with
// host-gw routes that follow the Node objects, a netns runtime and a kernel rule applier per
// node. Everything is named `kdp-<id>-…` (id = hash of the data dir) and recorded in the data
// dir's host state file, so `close()` — or `kdp down` after a crash — removes exactly it.

import { mkdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { netnsSockets, type NetnsSockets } from '../host/netns-socket.js';
import { dirname, join } from 'node:path';
import type { Node } from '../api/types.js';
import type { InformerFactory } from '../client/informer.js';
import { cleanupHost } from '../host/cleanup.js';
import type { HostExec } from '../host/exec.js';
import { buildHelperHostExec } from '../host/exec-helper.js';
import { buildKernelApplier } from '../proxy/kernel-applier.js';
import { recordProcess } from '../host/process.js';
import { HostStateFile } from '../host/state.js';
import {
  buildTopology, clusterId, clusterPrefix, type Topology, type TopologyNode,
} from '../host/topology.js';
import { resolveEchoCommand, type EchoCommand } from '../kubelet/echo-command.js';
import { buildBridgeCache } from '../cni/bridge-state.js';
import { buildIpSessionPool } from '../host/ip-session.js';
import { runCniPlugin } from '../cni/plugin.js';
import { buildCniShim, cniSocketDir } from '../cni/shim-build.js';
import { serveCni } from '../cni/shim-service.js';
import { buildHelperLauncher } from '../host/launcher.js';
import { buildNetnsRuntime, ipamDirFor, podNetnsName, type NetnsRuntimeOptions } from '../kubelet/runtime-netns.js';
import { buildSandboxNetns, deleteNetns, listNetns } from '../host/netns.js';
import { kdpError } from '../errors.js';
import type { Runtime } from '../kubelet/runtime.js';
import type { RuleApplier } from '../proxy/applier.js';
import type { ProxyMode } from '../proxy/backend.js';
import type { DataDirPaths } from './data-dir.js';
import type { HostLayout } from '../host/hosts.js';

export interface NetnsDataPlane {
  readonly topo: Topology;
  /** The program every pod's containers run (the native echo, or the JS one and why). */
  readonly echo: EchoCommand;
  /** Creates the node's namespace; returns its runtime and kube-proxy applier. */
  startNode(node: TopologyNode, mode: ProxyMode, opts?: { timeScale?: number;
    /** ConfigMap/Secret data for containers' env (the node's kubelet client). */
    lookup?: NetnsRuntimeOptions['lookup'];
    /** Per-pod files and namespaces (pod-mounts.ts): the kubelet's DNS settings and volumes. */
    dns?: NetnsRuntimeOptions['dns']; volumeFiles?: NetnsRuntimeOptions['volumeFiles'];
    apiService?: NetnsRuntimeOptions['apiService'];
    /** Where the node's containers' output goes (its CRI log files). */
    logStore?: NetnsRuntimeOptions['logStore'];
    /** Runs between a pod's CNI ADD and its containers (the node's policy controller). */
    beforeContainers?: NetnsRuntimeOptions['beforeContainers'] }):
    Promise<{ runtime: Runtime; applier: RuleApplier }>;
  /** The node's underlay link down (a partition, or part of a crash) or up again. */
  setUplink(node: string, up: boolean): Promise<void>;
  /**
   * Power off: every process in the node's pod namespaces dies at once (SIGKILL) and its link
   * goes down. The next `startNode` boots it: the old pods' namespaces and IP leases and the
   * node's namespace (its rules, routes, conntrack) are gone, and everything is made anew, as a
   * rebooted machine comes back with nothing running.
   */
  crashNode(node: string): Promise<void>;
  /** Sockets made inside the cluster's namespaces (kubelet API, port-forward). */
  readonly sockets: NetnsSockets;
  /** The door to the kernel tools this plane uses (the node agents' policy controller applies
   *  its nft table in the node's namespace through it). */
  readonly exec: HostExec;
  /** A TCP server bound to host:port inside the node's namespace (kube-proxy's metrics). */
  listenInNode(node: string, host: string, port: number): Promise<Server>;
  /** Keeps every node's host-gw routes in step with the Node objects. */
  watchRoutes(informers: InformerFactory, onError: (e: unknown) => void): void;
  close(): Promise<void>;
}

/** The pods' CNI network: a conf dir (first file by name) and CNI_PATH; default kdp-cni built in. */
export interface CniNetworkOptions {
  readonly confDir?: string;
  readonly binDirs?: readonly string[];
  /** The cluster's pod CIDRs (masquerade exclusion; an IPv6 one turns on the IPv6 underlay). */
  readonly clusterCIDRs?: readonly string[];
  /** The built-in network's pod MTU (the VXLAN backend's: 50 less than the underlay's). */
  readonly mtu?: number;
  /** Simulated hosts (host/hosts.ts): nodes attach to their host's underlay; default one. */
  readonly hosts?: HostLayout;
}

/**
 * A plane that joins the underlay of a netns cluster another process runs on this host (`kdp
 * node --name N` beside `sudo kdp up` in the same data dir), for the one node it hosts: the
 * underlay must exist and is left alone; the node's namespace, its pods' namespaces and its
 * processes are recorded in the node's own state file and are all that `close()` (or the next
 * start after a crash) removes — the cluster's other namespaces are not this process's.
 */
export interface JoinNode {
  readonly node: string;
  /** A node joined from inside a simulated host with a data dir of its own (`kdp sh hK -- kdp
   *  node join`): the lab's cluster id, whose prefix its kernel objects carry (so the lab's
   *  tools and `kdp down` find them); its state, leases and sockets stay in its own data dir. */
  readonly clusterId?: string;
}

/** The host state file of a node joined by a separate process. */
export function joinedNodeStateFile(paths: DataDirPaths, node: string): string {
  return join(paths.root, 'nodes', node, 'host-state.json');
}

const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

interface NodeCniService { close(): Promise<void> }

/** The node's CNI service for the native plugin: the in-process plugin with its own bridge
 *  cache and two `ip -batch` sessions in the node's namespace, started on first use. */
async function serveNodeCni(exec: HostExec, nodeNetns: string, socketDir: string): Promise<NodeCniService> {
  const bridgeCache = buildBridgeCache();
  const ipSessions = buildIpSessionPool(nodeNetns, { size: 2 });
  const service = await serveCni({
    socketDir, netnsPath: `/run/netns/${nodeNetns}`,
    run: (inv) => runCniPlugin(inv, { exec, node: { name: nodeNetns }, bridgeCache, ipSessions }),
  });
  return { close: async () => { await service.close(); ipSessions.close(); } };
}

/** The prefix `kdp down` sweeps for the cluster of a data dir. */
export function hostPrefixFor(paths: DataDirPaths): string {
  return clusterPrefix(clusterId(paths.root));
}

export async function startNetnsDataPlane(
  paths: DataDirPaths, exec: HostExec = buildHelperHostExec(), cni: CniNetworkOptions = {}, joining?: JoinNode,
): Promise<NetnsDataPlane> {
  const id = joining?.clusterId ?? clusterId(paths.root);
  const prefix = clusterPrefix(id);
  // What this plane owns: the whole cluster prefix, or (joining) the node's namespace name and
  // what its own state file records.
  const stateFile = joining ? joinedNodeStateFile(paths, joining.node) : paths.hostState;
  const owned = joining ? `${prefix}-${joining.node}` : prefix;
  // What a crashed run of this data dir (or of this node) left behind goes first.
  await cleanupHost(exec, stateFile, owned);
  if (joining) mkdirSync(dirname(stateFile), { recursive: true });
  const state = new HostStateFile(stateFile, owned);
  const topo = buildTopology({
    exec, state, id, clusterCIDRs: cni.clusterCIDRs, hosts: cni.hosts,
  });
  if (!joining) await topo.ensureUnderlay();
  else if (!(await listNetns(exec)).includes(topo.underlayNetns)) {
    throw kdpError('KDP_NOT_RUNNING', `no netns cluster to join ${joining.clusterId ? `(lab ${prefix})`
      : `in ${paths.root}`} (namespace ${topo.underlayNetns} is missing): start it with \`sudo kdp up\``);
  }
  const echo = await resolveEchoCommand(join(paths.root, 'bin'));
  // The native kdp-cni for runtimes that exec plugins (bin/cni/kdp-cni), built in the
  // background (no node waits for a compiler); each node serves its requests from the start.
  // A joining node uses the one its cluster's process built.
  const shim = joining ? Promise.resolve()
    : buildCniShim(paths.root).catch((e: Error) => ({ ok: false as const, reason: e.message }));
  const started = new Set<string>();
  // One workload launcher for every node: kdp's own process never forks a pod's process.
  const launcher = buildHelperLauncher({
    warm: true,
    onSpawn: (pid) => { void state.addProcess(recordProcess(pid)); },
    onExit: (pid) => { void state.removeProcess(pid); },
  });
  // Pod namespaces of every node come from the same ip sessions (host/netns.ts).
  const sandboxNetns = buildSandboxNetns({ warm: true });
  // Per node, kept across `kdp node stop/start`: the restarted kubelet finds its pods running
  // (like a real kubelet restart) instead of wiring them a second time.
  const planes = new Map<string, { runtime: Runtime; applier: RuleApplier; cni?: NodeCniService }>();
  let chain = Promise.resolve();
  let stopped = false;
  const crashed = new Set<string>();
  const sockets = netnsSockets();
  /** Per node, the peers its host-gw routes were last synced to (a booted node has none). */
  const synced = new Map<string, string>();

  /** Sends `signal` to every process running in `netns`. */
  const signalAllIn = async (netns: string, signal: NodeJS.Signals) => {
    const { stdout } = await exec.run('ip', ['netns', 'pids', netns]).catch(() => ({ stdout: '' }));
    for (const pid of stdout.split('\n').map(Number).filter((p) => p > 0)) {
      try { process.kill(pid, signal); } catch { /* gone already */ }
    }
  };
  const dropNetns = async (netns: string) => {
    await deleteNetns(exec, netns);
    await state.removeNetns(netns);
  };
  /** A crashed node's leftovers go; the caller then makes it as on a first start. */
  const boot = async (name: string) => {
    crashed.delete(name);
    synced.delete(name);
    const plane = planes.get(name);
    planes.delete(name);
    const pods = plane?.runtime.listPods() ?? [];
    await plane?.runtime.close().catch(() => undefined);
    await plane?.cni?.close();
    for (const uid of pods) await dropNetns(podNetnsName(prefix, uid));
    rmSync(ipamDirFor(paths.root, name), { recursive: true, force: true });
    await dropNetns(topo.nodeNetns(name));
  };

  return {
    topo,
    exec,
    echo,
    async startNode(node, mode, opts = {}) {
      if (crashed.has(node.name)) await boot(node.name);
      const have = planes.get(node.name);
      if (have) return have;
      const applier = buildKernelApplier(exec, topo.nodeNetns(node.name), mode);
      await topo.ensureNodeNetns(node);
      started.add(node.name);
      const runtime = buildNetnsRuntime({
        exec, state, prefix, nodeNetns: topo.nodeNetns(node.name), ipamDir: ipamDirFor(paths.root, node.name),
        cniConfDir: cni.confDir, cniBinDirs: cni.binDirs, podMtu: cni.mtu, echo, launcher, sandboxNetns,
        timeScale: opts.timeScale, nodeName: node.name,
        nodeIPs: node.ip6 ? [node.ip, node.ip6] : [node.ip], lookup: opts.lookup,
        apiService: opts.apiService, ...(opts.logStore ? { logStore: opts.logStore } : {}),
        ...(opts.beforeContainers ? { beforeContainers: opts.beforeContainers } : {}),
        ...(opts.dns ? { podsDir: join(paths.root, 'pods', node.name), dns: opts.dns, volumeFiles: opts.volumeFiles } : {}),
      });
      const cniService = await serveNodeCni(exec, topo.nodeNetns(node.name), cniSocketDir(paths.root));
      planes.set(node.name, { runtime, applier, cni: cniService });
      return { runtime, applier };
    },
    setUplink: (node, up) => topo.setUplink(node, up),
    sockets,
    listenInNode: (node, host, port) => sockets.listen(topo.nodeNetns(node), host, port),
    async crashNode(node) {
      const plane = planes.get(node);
      const pods = plane?.runtime.listPods() ?? [];
      const netnses = pods.map((uid) => podNetnsName(prefix, uid));
      await topo.setUplink(node, false);
      // Frozen first, so nothing runs a signal handler; then the runtime is told its pods
      // stop (no restarts) and every process dies by SIGKILL, as at power-off.
      for (const ns of netnses) await signalAllIn(ns, 'SIGSTOP');
      const stopping = pods.map((uid) => plane!.runtime.stopPod?.(uid, 0));
      for (const ns of netnses) await signalAllIn(ns, 'SIGKILL');
      await Promise.all(stopping);
      crashed.add(node);
    },
    watchRoutes(informers, onError) {
      const inf = informers.informerFor<Node>(NODES);
      const sync = () => {
        chain = chain.then(async () => {
          if (stopped) return;
          const peers = inf.cache.list().map((n) => ({
            name: n.metadata.name!,
            ips: (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP')
              .map((a) => a.address),
            podCIDRs: n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []),
          })).filter((p) => p.ips.length > 0);
          // Nodes side by side (their routes are independent): while nodes join, one at a time
          // lagged seconds behind. Node heartbeats and status updates change nothing here: only
          // a new set of peers costs the two `ip` runs of a sync.
          await Promise.all([...started].map(async (name) => {
            const mine = peers.filter((p) => p.name !== name);
            const key = JSON.stringify(mine);
            if (synced.get(name) === key) return;
            await topo.syncRoutes(name, mine);
            synced.set(name, key);
          }));
        }).catch(onError);
      };
      inf.addEventHandler({ onAdd: sync, onUpdate: sync, onDelete: sync });
    },
    async close() {
      stopped = true;
      sockets.close();
      await chain;
      for (const p of planes.values()) {
        await p.runtime.close().catch(() => undefined);
        await p.cni?.close();
      }
      await launcher.close().catch(() => undefined);
      sandboxNetns.close();
      await shim;
      await state.settled().catch(() => undefined); // cleanup reads the file
      await cleanupHost(exec, stateFile, owned);
    },
  };
}
