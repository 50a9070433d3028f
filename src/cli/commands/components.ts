// The control-plane components as their own processes, over HTTP (hub and spoke): a lab can run
// `kdp apiserver` on one machine and `kdp controller-manager`, `kdp scheduler` and
// `kdp node --name N` anywhere that reaches it.

import { existsSync } from 'node:fs';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import type { Client } from '../../client/types.js';
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

/** `--cluster-signing-{cert,key}-file`, else the data dir's cluster CA when its key is there. */
async function signingCa(flags: FlagValues, dataDir: string): Promise<{ certPem: string; keyPem: string } | undefined> {
  const cert = flags['cluster-signing-cert-file'] as string | undefined;
  const key = flags['cluster-signing-key-file'] as string | undefined;
  if ((cert === undefined) !== (key === undefined)) {
    throw kdpError('KDP_CONFIG', '--cluster-signing-cert-file and --cluster-signing-key-file: give both or neither');
  }
  if (cert && key) {
    return { certPem: await readInput(cert, '--cluster-signing-cert-file'), keyPem: await readInput(key, '--cluster-signing-key-file') };
  }
  const { readClusterCa } = await import('../../apiserver/pki/node-credentials.js');
  return readClusterCa(dataDir);
}

export const controllerManagerCommand: Command = {
  name: 'controller-manager',
  summary: 'run the controllers (deployment, replicaset, endpointslice, node IPAM and lifecycle, ...) against an API server',
  flags: [...COMMON,
    { name: 'cluster-cidr', type: 'string', default: '10.244.0.0/16', help: 'pod network: one CIDR or a dual-stack pair, primary first' },
    { name: 'service-cluster-ip-range', type: 'string', default: '10.96.0.0/12', help: 'kept out of node CIDRs' },
    ...NODE_MASK_FLAGS, ...CLOUD_FLAGS,
    { name: 'cluster-signing-cert-file', type: 'string', help: 'CA certificate csrsigning signs with (default <data-dir>/pki/ca.crt when its key is there)' },
    { name: 'cluster-signing-key-file', type: 'string', help: 'its private key (default <data-dir>/pki/ca.key)' }],
  async run(args, io) {
    const cloud = cloudFlags(args.flags);
    const { buildControllerManager } = await import('../../controllers/manager.js');
    const { client, factor, kubeconfig, dataDir } = connect(args.flags, io.env);
    const clusterSigning = await signingCa(args.flags, dataDir);
    const manager = buildControllerManager({ client, options: {
      timeScale: factor, clusterCIDR: args.flags['cluster-cidr'] as string,
      serviceCIDR: args.flags['service-cluster-ip-range'] as string,
      ...nodeMaskFlags(args.flags), ...cloud,
      // As upstream without --root-ca-file: the CA of the kubeconfig it talks to the API with.
      rootCaPem: loadKubeconfig(kubeconfig).caPem,
      ...(clusterSigning ? { clusterSigning } : {}),
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
  summary: 'run one node agent (kubelet + kube-proxy) against an API server; beside a netns `kdp up` in the same data dir, a netns node of it (root)',
  flags: [
    { name: 'name', type: 'string', help: 'node name (required)' },
    { name: 'node-ip', type: 'string', help: 'the node\'s InternalIP (dual stack: a comma-separated pair, primary first); default 172.18.0.2, or in netns mode the first free underlay address' },
    { name: 'mode', type: 'string', default: 'iptables', help: 'kube-proxy mode: iptables | nftables | ipvs (unused when the cluster runs kube-proxy as a DaemonSet)' },
    { name: 'kube-proxy-config', type: 'string', help: 'a KubeProxyConfiguration file' },
    { name: 'host', type: 'number', help: 'beside a `kdp up --hosts N`: the simulated host (1..N) whose underlay the node joins (default 1)' },
    ...COMMON,
  ],
  async run(args, io) {
    const name = args.flags.name as string | undefined;
    if (!name) throw kdpError('KDP_CONFIG', '--name: the node name is required');
    const mode = parseMode(args.flags.mode)!;
    const { client, factor, dataDir, kubeconfig } = connect(args.flags, io.env);
    const paths = dataDirPaths(dataDir);
    const [{ startNodeProcess, runNodeUntilInterrupted }, { readClusterInfo }] = await Promise.all([
      import('../../cluster/node-process.js'), import('../../cluster/cluster-file.js')]);
    let cluster: ReturnType<typeof readClusterInfo> | undefined;
    try { cluster = readClusterInfo(paths); } catch { /* no kdp up in this data dir (kdp apiserver) */ }
    if (cluster?.mode === 'netns' && mode !== cluster.proxyMode && !args.flags['kube-proxy-config']) {
      io.err(`kdp node ${name}: kube-proxy in ${mode} mode beside a cluster in ${cluster.proxyMode} mode\n`);
    }
    const nodeIPs = (args.flags['node-ip'] as string | undefined)?.split(',').map((s) => s.trim()).filter(Boolean);
    const node = await startNodeProcess({ paths, kubeconfig, client, name, proxyMode: mode, factor, cluster,
      ...(nodeIPs?.length ? { nodeIPs } : {}),
      ...(args.flags.host !== undefined ? { host: (args.flags.host as number) - 1 } : {}),
      kubeProxyConfig: args.flags['kube-proxy-config']
        ? await readInput(args.flags['kube-proxy-config'] as string, '--kube-proxy-config') : undefined,
      log: (line) => io.err(`kdp node ${name}: ${line}\n`) });
    await runNodeUntilInterrupted(node, { name, proxyMode: mode, interrupted: io.interrupted, err: (t) => io.err(t) });
    return 0;
  },
};
