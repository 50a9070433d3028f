// The control-plane components as their own processes, over HTTP (hub and spoke): a lab can run
// `kdp apiserver` on one machine and `kdp controller-manager`, `kdp scheduler` and
// `kdp node --name N` anywhere that reaches it.

import { existsSync } from 'node:fs';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import type { Client } from '../../client/types.js';
import type { Pod } from '../../api/types.js';
import type { NodeMonitor } from '../../metrics/node-monitor.js';
import { kdpError } from '../../errors.js';
import type { FlagSpec, FlagValues } from '../flags.js';
import type { Command } from '../command.js';
import { readInput } from '../read-input.js';
import { parseMode } from './rules-compile.js';
import { DATA_DIR_FLAG, NODE_MASK_FLAGS, nodeMaskFlags } from '../shared-flags.js';
import { CLOUD_FLAGS, cloudFlags } from '../cloud-flags.js';

const COMMON: readonly FlagSpec[] = [
  { name: 'kubeconfig', type: 'string', help: 'kubeconfig of the API server (default <data-dir>/kubeconfig)' },
  { name: 'time-scale', type: 'number', default: 1, help: 'divide every control-loop timer (match the cluster\'s)' },
  DATA_DIR_FLAG,
];

function connect(flags: FlagValues, env: Readonly<Record<string, string | undefined>>): { client: Client; factor: number; dataDir: string; kubeconfig: string } {
  const dataDir = resolveDataDir(flags['data-dir'] as string | undefined, env);
  const path = (flags.kubeconfig as string | undefined) ?? dataDirPaths(dataDir).kubeconfig;
  if (!existsSync(path)) throw kdpError('KDP_NOT_RUNNING', `no kubeconfig at ${path} (--kubeconfig, or start \`kdp apiserver\`)`);
  const scale = flags['time-scale'] as number;
  if (!(scale > 0)) throw kdpError('KDP_CONFIG', '--time-scale: must be greater than 0');
  return { client: buildHttpClient(loadKubeconfig(path)), factor: 1 / scale, dataDir, kubeconfig: path };
}

export const controllerManagerCommand: Command = {
  name: 'controller-manager',
  summary: 'run the controllers (deployment, replicaset, endpointslice, node IPAM and lifecycle, ...) against an API server',
  flags: [...COMMON,
    { name: 'cluster-cidr', type: 'string', default: '10.244.0.0/16', help: 'pod network: one CIDR or a dual-stack pair, primary first' },
    { name: 'service-cluster-ip-range', type: 'string', default: '10.96.0.0/12', help: 'kept out of node CIDRs' },
    ...NODE_MASK_FLAGS, ...CLOUD_FLAGS],
  async run(args, io) {
    const cloud = cloudFlags(args.flags);
    const { buildControllerManager } = await import('../../controllers/manager.js');
    const { client, factor, kubeconfig } = connect(args.flags, io.env);
    const manager = buildControllerManager({ client, options: {
      timeScale: factor, clusterCIDR: args.flags['cluster-cidr'] as string,
      serviceCIDR: args.flags['service-cluster-ip-range'] as string,
      ...nodeMaskFlags(args.flags), ...cloud,
      // As upstream without --root-ca-file: the CA of the kubeconfig it talks to the API with.
      rootCaPem: loadKubeconfig(kubeconfig).caPem,
    } });
    await manager.start();
    io.err('kdp controller-manager running\n');
    await io.interrupted;
    await manager.stop();
    return 0;
  },
};

export const schedulerCommand: Command = {
  name: 'scheduler',
  summary: 'run the scheduler against an API server',
  flags: COMMON,
  async run(args, io) {
    const { buildScheduler } = await import('../../scheduler/scheduler.js');
    const { client, factor } = connect(args.flags, io.env);
    const scheduler = buildScheduler({ client, options: { timeScale: factor } });
    await scheduler.start();
    io.err('kdp scheduler running\n');
    await io.interrupted;
    scheduler.stop();
    return 0;
  },
};

export const nodeAgentCommand: Command = {
  name: 'node',
  summary: 'run one node agent (kubelet with the virtual runtime + kube-proxy) against an API server',
  flags: [
    { name: 'name', type: 'string', help: 'node name (required)' },
    { name: 'node-ip', type: 'string', default: '172.18.0.2', help: 'the node\'s InternalIP (dual stack: a comma-separated pair, primary first)' },
    { name: 'mode', type: 'string', default: 'iptables', help: 'kube-proxy mode: iptables | nftables | ipvs' },
    { name: 'kube-proxy-config', type: 'string', help: 'a KubeProxyConfiguration file' },
    ...COMMON,
  ],
  async run(args, io) {
    const [{ nodeProcessClients, nodeProcessKubeletTls }, { buildNodeAgent }, { buildVirtualRuntime },
      { buildMemoryApplier }, { RuleHistory, rulesDir }, { buildKubeProxy }, serve, logFiles] = await Promise.all([
      import('../../cluster/node-identity.js'), import('../../kubelet/node-agent.js'),
      import('../../kubelet/runtime-virtual.js'), import('../../proxy/applier.js'),
      import('../../proxy/history.js'), import('../../proxy/proxy-server.js'),
      import('../../kubelet/server/serve.js'), import('../../kubelet/container-log-files.js')]);
    const name = args.flags.name as string | undefined;
    if (!name) throw kdpError('KDP_CONFIG', '--name: the node name is required');
    const mode = parseMode(args.flags.mode)!;
    const { client: given, factor, dataDir, kubeconfig } = connect(args.flags, io.env);
    const { kubelet: client, kubeProxy } = await nodeProcessClients(kubeconfig, dataDir, name,
      given, (line) => io.err(`kdp node ${name}: ${line}\n`));
    const nodeIPs = (args.flags['node-ip'] as string).split(',').map((s) => s.trim()).filter(Boolean);
    const nodeIP = nodeIPs.join(', ');
    const runtime = buildVirtualRuntime({ timeScale: factor,
      logStore: logFiles.fileLogStore(logFiles.nodeDirOf(dataDir, name)) });
    // The kubelet API on a free loopback port, published in the Node's daemonEndpoints: the API
    // server reaches it there for logs and nodes/proxy (as for kdp up's virtual nodes).
    const tls = await nodeProcessKubeletTls(dataDir, name, nodeIPs);
    let agentRef: { pod(ns: string, n: string): Pod | undefined; pods?(): readonly Pod[] } | undefined;
    let monitorRef: NodeMonitor | undefined;
    const kubeletApi = tls ? await serve.listenOnLoopback(serve.buildNodeKubeletServer({
      nodeName: name, tls, client, agent: () => agentRef, runtime, monitor: () => monitorRef })) : undefined;
    if (!tls) io.err(`kdp node ${name}: no cluster CA key in ${dataDir}/pki: serving no kubelet API (no logs)\n`);
    const agent = buildNodeAgent({ client, nodeName: name, runtime,
      options: { nodeIPs, timeScale: factor, ...(kubeletApi ? { kubeletPort: kubeletApi.port } : {}) } });
    agentRef = agent;
    // Its usage (the virtual model) on /metrics/resource, which kdp up's collector scrapes.
    monitorRef = (await import('../../metrics/node-monitor.js')).buildNodeMonitors()
      .attach(name, { pods: () => agent.pods?.() ?? [] }, runtime);
    await agent.start();
    // The node's runtime endpoint (`kdp crictl --node NAME`), in the data dir it was given.
    const { serveNodeRuntimeEndpoint } = await import('../../kubelet/runtime-endpoint/serve.js');
    const closeRuntime = await serveNodeRuntimeEndpoint({ dataDir, nodeName: name, runtime });
    const proxy = await buildKubeProxy({
      client: kubeProxy, nodeName: name, nodeIPs, mode, applier: buildMemoryApplier(mode),
      configText: args.flags['kube-proxy-config'] ? await readInput(args.flags['kube-proxy-config'] as string, '--kube-proxy-config') : undefined,
      history: new RuleHistory(rulesDir(dataDir, name)), timeScale: factor,
      onError: (e) => io.err(`kube-proxy: ${(e as Error).message}\n`),
      log: (line) => io.err(`${line}\n`),
    });
    await proxy.start();
    io.err(`kdp node ${name} (${nodeIP}) running: kubelet (virtual runtime${kubeletApi
      ? `, API on 127.0.0.1:${kubeletApi.port}` : ''}) + kube-proxy (${mode})\n`);
    await io.interrupted;
    proxy.stop();
    await agent.stop();
    kubeletApi?.close();
    await closeRuntime();
    return 0;
  },
};
