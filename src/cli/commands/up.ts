// `kdp up`: run a cluster (foreground, or -d to detach and return once every node is Ready).

import { delimiter, join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { kdpError } from '../../errors.js';
import { readClusterInfo, type ClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir, type DataDirPaths } from '../../cluster/data-dir.js';
import { livePid, spawnDetached } from '../../cluster/daemon.js';
import { KDP_NODE_FLAGS } from '../node-flags.js';
import { CLOUD_FLAGS, cloudFlags } from '../cloud-flags.js';
import { resolveClusterNetwork, type ClusterNetwork } from '../../cluster/network.js';
import { apiServiceIP } from '../../api/service-cidr.js';
import { endpointString } from '../../trace/packet.js';
import type { Command, CliIO } from '../command.js';
import type { ParsedArgs } from '../flags.js';
import { readInput } from '../read-input.js';
import { parseStoreSize } from '../../logging/size.js';
import { DATA_DIR_FLAG, ETCD_FLAGS, etcdOptions, NODE_MASK_FLAGS, nodeMaskFlags, REPAIR_FLAG } from '../shared-flags.js';
import { parseMode } from './rules-compile.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { accessSync, constants, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isAlive, recordProcess } from '../../host/process.js';
import { PRIVATE_DIR_MODE } from '../../util/private-files.js';
import { parseHostLayout } from '../../host/hosts.js';
import { parseBackend } from '../../cni/backend.js';

const NETWORK_FLAGS = [
  { name: 'ip-family', type: 'string', help: 'ipv4 | ipv6 | dual (default: from --cluster-cidr, else ipv4)' },
  { name: 'cluster-cidr', type: 'string',
    help: 'pod network: one CIDR or a pair, primary first (default 10.244.0.0/16; IPv6 fd00:10:244::/56)' },
  { name: 'service-cidr', type: 'string',
    help: 'Service ClusterIP range(s), one or a pair (default 10.96.0.0/12; IPv6 fd00:10:96::/112)' },
  ...NODE_MASK_FLAGS,
] as const;

/**
 * What differs between the commands that start a cluster (`kdp up`, `kdp init`): the lines
 * stdout ends with once it is ready. Everything else is the one runner below.
 */
export interface UpShape {
  message(info: ClusterInfo, dataDir: string, o: {
    readonly detached: boolean; readonly env: Readonly<Record<string, string | undefined>>;
    /** The `kdp node join …` line for other hosts (the cluster's node token). */
    joinCommand(): Promise<string>;
  }): Promise<string>;
}

const UP_SHAPE: UpShape = {
  message: async (info, dataDir, o) => readyMessage(info, dataDir, o) + await uiLines(info, dataDir, o.env),
};

export const upCommand: Command = {
  name: 'up',
  summary: 'start a cluster: API server, controllers, scheduler and N nodes (kubelet + kube-proxy)',
  run: (args, io) => runUp(args, io, UP_SHAPE),
  flags: [
    { name: 'nodes', type: 'number', default: 2, help: 'number of nodes (n1..nN, 172.18.0.2...)' },
    { name: 'port', type: 'number', default: 6443, help: 'API server port on 127.0.0.1 (0: any free port)' },
    { name: 'mode', type: 'string', default: 'iptables', help: 'kube-proxy mode: iptables | nftables | ipvs' },
    { name: 'kube-proxy-config', type: 'string', help: 'a KubeProxyConfiguration file for every node' },
    { name: 'time-scale', type: 'number', default: 1, help: 'divide every control-loop timer (10: 50 s node grace period becomes 5 s)' },
    { name: 'virtual', type: 'boolean', default: false, help: 'virtual mode even as root (no kernel objects)' },
    { name: 'netns', type: 'boolean', default: false, help: 'netns mode or nothing: fail (before creating anything) when a preflight check fails' },
    { name: 'detach', short: 'd', type: 'boolean', default: false, help: 'start in the background; return when every node is Ready' },
    { name: 'cni-conf-dir', type: 'string', help: 'netns mode: pods\' CNI network from this dir (first *.conflist/*.conf by name)' },
    { name: 'cni-bin-dir', type: 'string', help: 'netns mode: CNI plugin dirs, comma-separated (default /usr/lib/cni)' },
    ...NETWORK_FLAGS,
    { name: 'hosts', type: 'number', default: 1, help: 'netns mode: spread the nodes over N simulated hosts (namespaces with their own underlay; node i on host i mod N)' },
    { name: 'host-link', type: 'string', default: 'routed', help: 'with --hosts: routed (a subnet per host behind a router: no shared L2) | l2 (one segment)' },
    { name: 'backend', type: 'string', help: 'pod network between nodes: host-gw | vxlan | auto (host-gw on one segment, else vxlan); default host-gw, auto with --hosts' },
    { name: 'no-dns', type: 'boolean', default: false, help: 'leave out the cluster DNS addon (kube-system/coredns behind the kube-dns Service)' },
    { name: 'resolv-conf', type: 'string', help: 'the kubelets\' resolv.conf for dnsPolicy Default pods (the coredns pods\' upstreams; default /etc/resolv.conf; "": none, names outside the cluster REFUSED at once)' },
    { name: 'log-store-size', type: 'string', default: '256Mi', help: 'bound of the cluster log store in the data dir (kdp logs): oldest lines dropped past it' },
    { name: 'prometheus', type: 'boolean', default: false, help: 'write a Prometheus scrape config (data dir/prometheus) and run Debian\'s prometheus on 127.0.0.1' },
    { name: 'prometheus-port', type: 'number', default: 9090, help: 'with --prometheus: its port on 127.0.0.1' },
    { name: 'etcd', type: 'number', help: 'keep objects in a local etcd cluster of 1, 3 or 5 members (TLS), not the embedded store' },
    { name: 'control-plane-taint', type: 'boolean', default: false, help: 'taint n1 node-role.kubernetes.io/control-plane:NoSchedule as kubeadm and kind do (user pods then avoid it)' },
    { name: 'apiservers', type: 'number', default: 1, help: 'API servers on the shared etcd (needs --etcd) behind one address on --port, as an HA control plane' },
    ...ETCD_FLAGS,
    DATA_DIR_FLAG,
    REPAIR_FLAG,
    ...CLOUD_FLAGS,
  ],
};

/** `kdp up` (and `kdp init`, in its shape): the flags are kdp up's. */
export async function runUp(args: ParsedArgs, io: CliIO, shape: UpShape): Promise<number> {
  const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
  const proxyMode = parseMode(args.flags.mode)!;
  const timeScale = args.flags['time-scale'] as number;
  if (!(timeScale > 0)) throw kdpError('KDP_CONFIG', '--time-scale: must be greater than 0');
  const network = networkFlags(args.flags);
  const cloud = cloudFlags(args.flags);
  const hosts = parseHostLayout(args.flags.hosts as number, args.flags['host-link'] as string);
  const backend = parseBackend((args.flags.backend as string | undefined) ?? (hosts.count > 1 ? 'auto' : 'host-gw'));
  const logStoreBytes = parseStoreSize(args.flags['log-store-size'] as string, '--log-store-size');
  if (livePid(paths.pidFile) !== undefined) {
    throw kdpError('KDP_CONFIG', `a cluster is already running in ${paths.root} (kdp down, or --data-dir)`);
  }
  if (args.flags.detach && io.env.KDP_DETACHED !== '1') return detach(paths, io, shape);
  // The cluster's code loads only now: other commands start without it.
  const [{ startCluster }, { assertKernelMode }] = await Promise.all([
    import('../../cluster/up.js'), import('../../proxy/kernel-applier.js')]);
  const dataPlane = await chooseDataPlane(args.flags, io);
  if (dataPlane === 'netns') {
    assertKernelMode(proxyMode);
    io.err('kdp: root: netns mode (a network namespace per node and per pod; kernel rules)\n');
  }
  const cluster = await startCluster({
    paths, nodes: args.flags.nodes as number, port: args.flags.port as number, proxyMode, timeScale, dataPlane,
    kubeProxyConfig: args.flags['kube-proxy-config']
      ? await readInput(args.flags['kube-proxy-config'] as string, '--kube-proxy-config') : undefined,
    progress: (l) => io.err(`  ${l}\n`),
    cni: cniFlags(args.flags), network,
    store: { repair: args.flags.repair as boolean, log: (l) => io.err(`kdp: ${l}\n`) },
    etcd: etcdChoice(args.flags),
    apiservers: args.flags.apiservers as number,
    controlPlaneTaint: args.flags['control-plane-taint'] as boolean,
    dns: !args.flags['no-dns'],
    resolvConf: args.flags['resolv-conf'] as string | undefined,
    logStoreBytes,
    prometheus: args.flags.prometheus ? { port: args.flags['prometheus-port'] as number } : undefined,
    systemPods: true, cloud, hosts, backend,
  });
  const ready = readClusterInfo(paths);
  io.out(await shape.message(ready, paths.root, { detached: false, env: io.env,
    joinCommand: async () => cluster.joinCommand }));
  await io.interrupted;
  io.err('kdp: shutting down\n');
  // Shutdown waits on helper processes that do not hold the event loop open (they are unref'd
  // while idle); this timer does, so Node cannot exit with the cleanup half done.
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    await cluster.close();
  } finally {
    clearInterval(keepAlive);
  }
  return 0;
}

/**
 * netns mode when root and every required preflight check passes (src/host/preflight.ts);
 * otherwise virtual mode, saying why and what would enable netns mode. `--netns` turns each of
 * those into an error, raised before anything is created.
 */
export async function chooseDataPlane(flags: Record<string, unknown>, io: CliIO): Promise<'netns' | 'virtual'> {
  if (flags.netns && flags.virtual) throw kdpError('KDP_CONFIG', '--netns and --virtual: choose one');
  if (flags.virtual) return 'virtual';
  const { installHint, localPreflightHost, preflightChecks, preflightFailures } =
    await import('../../host/preflight.js');
  const host = localPreflightHost(io.env);
  if (!host.isRoot) {
    if (flags.netns) throw kdpError('KDP_CONFIG', '--netns: netns mode creates network namespaces: run as root (sudo)');
    io.err('kdp: not root: virtual mode (rules are compiled and kept per node; no kernel objects)\n');
    return 'virtual';
  }
  const failed = preflightFailures(preflightChecks(host));
  if (failed.length === 0) return 'netns';
  const hint = installHint(failed);
  const what = failed.map((c) => (c.pkg ? `${c.name} (package ${c.pkg})` : c.name)).join(', ');
  if (flags.netns) {
    throw kdpError('KDP_CONFIG', `--netns: netns mode needs ${what}${hint ? `; install with: ${hint}` : ''} ` +
      '(kdp doctor lists every check)');
  }
  io.err(`kdp: root, but netns mode needs ${what}: virtual mode instead.` +
    `${hint ? ` For netns mode: ${hint}.` : ''} (kdp doctor lists every check)\n`);
  return 'virtual';
}

function etcdChoice(flags: Record<string, unknown>): number | ReturnType<typeof etcdOptions> {
  const servers = etcdOptions(flags);
  if (flags.etcd !== undefined && servers) throw kdpError('KDP_CONFIG', '--etcd and --etcd-servers: choose one');
  return (flags.etcd as number | undefined) ?? servers;
}

function cniFlags(flags: Record<string, unknown>): { confDir?: string; binDirs?: string[] } {
  const confDir = flags['cni-conf-dir'] as string | undefined;
  const bin = flags['cni-bin-dir'] as string | undefined;
  return {
    confDir: confDir ? resolve(confDir) : undefined,
    binDirs: bin ? bin.split(',').filter(Boolean).map((d) => resolve(d)) : undefined,
  };
}

/** The cluster's families and ranges from the flags, validated before anything starts. */
function networkFlags(flags: Record<string, unknown>): ClusterNetwork {
  return resolveClusterNetwork({
    ipFamily: flags['ip-family'] as string | undefined,
    clusterCIDR: flags['cluster-cidr'] as string | undefined,
    serviceCIDR: flags['service-cidr'] as string | undefined,
    ...nodeMaskFlags(flags),
  });
}

/** What the ready message needs to know of the cluster (a subset of cluster.json). */
export type ReadyInfo = Pick<ClusterInfo, 'url' | 'kubeconfig' | 'mode' | 'proxyMode' | 'timeScale' |
  'serviceCIDRs' | 'nodes'>;

/**
 * The lines `kdp up` ends with. Every hint is a command that works pasted as it is: `npx kdp`
 * unless a `kdp` is on PATH, and `--data-dir` whenever the directory is not the default one.
 */
export function readyMessage(info: ReadyInfo, dataDir: string, o: {
  readonly detached: boolean; readonly env: Readonly<Record<string, string | undefined>>;
}): string {
  const kdp = onPath('kdp', o.env.PATH) ? 'kdp' : 'npx kdp';
  const dd = resolve(dataDir) === resolve(join(homedir(), '.kdp')) ? '' : ` --data-dir ${dataDir}`;
  const node = info.nodes[0]?.name ?? 'n1';
  const scale = info.timeScale === 1 ? '' : `, time scale ${info.timeScale}`;
  return [
    `kdp cluster ready at ${info.url} (${info.mode} mode, kube-proxy ${info.proxyMode}${scale})`,
    '',
    `  export KUBECONFIG=${info.kubeconfig}`,
    '  kubectl get nodes',
    `  ${kdp} rules${dd} --node ${node}          # the rules ${node}'s kube-proxy holds`,
    `  ${kdp} trace${dd} ${node} ${endpointString(apiServiceIP(info.serviceCIDRs ?? ['10.96.0.0/12']), 443)}`,
    '',
    o.detached ? `Stop with \`${kdp} down${dd}\`.` : `Stop with Ctrl-C (or \`${kdp} down${dd}\`).`,
    '',
  ].join('\n');
}

/** The web UI's one-time login link (src/ui), asked of the API server with the kubeconfig. */
async function uiLines(info: ReadyInfo, dataDir: string,
  env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const { uiLinkLines } = await import('../../ui/server/link-client.js');
  const dd = resolve(dataDir) === resolve(join(homedir(), '.kdp')) ? '' : ` --data-dir ${dataDir}`;
  return uiLinkLines(info.kubeconfig, `${onPath('kdp', env.PATH) ? 'kdp' : 'npx kdp'} ui${dd}`);
}

/** Whether an executable `name` is in one of PATH's directories. */
function onPath(name: string, path: string | undefined): boolean {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

async function detach(paths: DataDirPaths, io: CliIO, shape: UpShape): Promise<number> {
  const script = fileURLToPath(new URL('../../../bin/kdp.js', import.meta.url));
  const argv = process.argv.slice(2).filter((a) => a !== '-d' && a !== '--detach');
  if (!argv.includes('--data-dir')) argv.push('--data-dir', paths.root);
  mkdirSync(paths.root, { recursive: true, mode: PRIVATE_DIR_MODE }); // the child tightens an old one
  const child = recordProcess(spawnDetached(script, argv, paths.logFile, KDP_NODE_FLAGS));
  for (let waited = 0; waited < 120_000; waited += 200) {
    let info: ClusterInfo | undefined;
    try {
      info = readClusterInfo(paths);
    } catch {
      // not up yet
    }
    if (info) {
      const ready = info;
      io.out(await shape.message(ready, paths.root, { detached: true, env: io.env,
        joinCommand: () => joinCommandOf(ready) }));
      return 0;
    }
    if (!isAlive(child)) break;
    await sleep(200);
  }
  const log = existsSync(paths.logFile) ? readFileSync(paths.logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
  throw kdpError('KDP_UNAVAILABLE', `kdp up -d: the cluster did not come up; last log lines:\n${log}`);
}

/** The running cluster's join line, asked of it as `kdp token create --print-join-command` asks
 *  (its address from cluster-info), with the node token kdp up made (reused, not a new one). */
async function joinCommandOf(info: ClusterInfo): Promise<string> {
  const [{ buildHttpClient }, { loadKubeconfig }, { readClusterJoinServer }, { ensureInitToken, joinCommand }] =
    await Promise.all([import('../../client/http-client.js'), import('../../client/kubeconfig.js'),
      import('../../bootstrap/cluster-info-read.js'), import('../../bootstrap/token-store.js')]);
  const k = loadKubeconfig(info.kubeconfig);
  if (!k.caPem) throw kdpError('KDP_CONFIG', `${info.kubeconfig}: no certificate-authority-data (the join line pins the CA)`);
  const client = buildHttpClient(k);
  try {
    const server = await readClusterJoinServer(client) ?? k.server;
    return joinCommand(server, await ensureInitToken(client, server, k.caPem), k.caPem);
  } finally {
    client.close();
  }
}
