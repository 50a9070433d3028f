// `kdp node join https://HOST:PORT --token T --discovery-token-ca-cert-hash sha256:H`: kubeadm
// join's TLS bootstrap (bootstrap/join.ts) for this machine's node, then the node agent exactly
// as `kdp node --name N` runs it (cluster/node-process.ts), under the node's new certificate;
// its kubelet then gets its serving certificate by a kubelet-serving CSR (serverTLSBootstrap).
// Where the node's data plane is: beside a netns `kdp up` in the same data dir, that cluster's
// (`--host K` picks the simulated host); run inside a simulated host's namespace (lab only:
// `sudo kdp sh h2 -- kdp node join …`, with a data dir of its own as a machine has), a netns node
// on that host's underlay; elsewhere the virtual runtime.

import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { SimulatedHost } from '../../host/hosts.js';
import { clusterId } from '../../host/topology.js';
import { rulesDir } from '../../proxy/history.js';
import { PRIVATE_DIR_MODE } from '../../util/private-files.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { kdpError } from '../../errors.js';
import { goDurationMs } from '../../util/go-duration.js';
import type { Command } from '../command.js';
import { readInput } from '../read-input.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';
import { parseMode } from './rules-compile.js';

function duration(flag: string, v: unknown): number {
  const ms = goDurationMs(String(v));
  if (ms === undefined || ms <= 0) throw kdpError('KDP_CONFIG', `--${flag}: ${JSON.stringify(v)} is not a positive duration (e.g. 5m, 30s)`);
  return ms;
}

/**
 * Lab only: as root, with no `kdp up` in the data dir, the simulated host whose namespace this
 * process runs in (`sudo kdp sh h2 -- kdp node join …`), if any; `--host K` must then name it.
 */
async function simulatedHostHere(host: number | undefined, log: (line: string) => void) {
  if (process.getuid?.() !== 0) return undefined;
  const [{ currentSimulatedHost }, { buildHostExec }, { loadTopology }] = await Promise.all([
    import('../../host/hosts.js'), import('../../host/exec.js'), import('../../host/topology.js')]);
  const found = await currentSimulatedHost(buildHostExec(), loadTopology());
  if (!found) return undefined;
  if (host !== undefined && host !== found.index + 1) {
    throw kdpError('KDP_CONFIG', `--host: ${host}, but this process runs in simulated host ${found.index + 1} (${found.netns})`);
  }
  log(`in simulated host h${found.index + 1} (${found.netns}): the node's namespace goes on its underlay`);
  return found;
}

/**
 * Lab only: the node's rule snapshots (kept in this machine's data dir) linked into the lab's
 * (`kdp sh` says where: KDP_LAB_DATA_DIR), where the lab's `kdp verify`, `kdp trace` and `kdp
 * rules` read every node's — when that data dir is the lab of the host this process runs in.
 */
function linkRulesIntoLab(labDir: string, host: SimulatedHost, ownDir: string, name: string, log: (line: string) => void): void {
  const lab = resolve(labDir);
  if (clusterId(lab) !== host.clusterId || lab === resolve(ownDir)) return;
  const link = rulesDir(lab, name);
  mkdirSync(dirname(link), { recursive: true, mode: PRIVATE_DIR_MODE });
  rmSync(link, { recursive: true, force: true });
  symlinkSync(rulesDir(resolve(ownDir), name), link);
  log(`rule snapshots linked into the lab's data dir: ${link}`);
}

export const nodeJoinCommand: Command = {
  name: 'node join',
  summary: 'join this machine\'s node to a cluster with a bootstrap token (kubeadm join), then run its agent',
  args: 'https://HOST:PORT',
  flags: [
    { name: 'token', type: 'string', help: 'bootstrap token <id>.<secret> (`kdp token create`; `kdp up` prints one)' },
    { name: 'discovery-token-ca-cert-hash', type: 'strings', help: 'sha256:<hex> pin of the cluster CA\'s public key (repeatable)' },
    { name: 'discovery-token-unsafe-skip-ca-verification', type: 'boolean', default: false, help: 'trust cluster-info without a CA pin (as kubeadm, unsafe)' },
    { name: 'discovery-timeout', type: 'string', default: '5m', help: 'how long to wait for a cluster-info signed by the token' },
    { name: 'name', type: 'string', help: 'node name (default: this host\'s name)' },
    { name: 'node-ip', type: 'string', help: 'the node\'s InternalIP (dual stack: a comma-separated pair); default as `kdp node`' },
    { name: 'mode', type: 'string', default: 'iptables', help: 'kube-proxy mode: iptables | nftables | ipvs' },
    { name: 'kube-proxy-config', type: 'string', help: 'a KubeProxyConfiguration file' },
    { name: 'time-scale', type: 'number', default: 1, help: 'divide every control-loop timer (match the cluster\'s)' },
    { name: 'host', type: 'number', help: 'lab only: beside a netns `kdp up --hosts N` in the same data dir, the simulated host (1..N) whose underlay the node joins (as `kdp node --host`); run inside a simulated host (`kdp sh hK -- kdp node join …`) the node goes on that host by itself' },
    DATA_DIR_FLAG,
  ],
  async run(args, io) {
    const server = args.positionals[0];
    if (!server || args.positionals.length !== 1) {
      throw kdpError('KDP_CONFIG', 'usage: kdp node join https://HOST:PORT --token T --discovery-token-ca-cert-hash sha256:H');
    }
    if (!args.flags.token) throw kdpError('KDP_CONFIG', '--token: required (a bootstrap token <id>.<secret>)');
    const scale = args.flags['time-scale'] as number;
    if (!(scale > 0)) throw kdpError('KDP_CONFIG', '--time-scale: must be greater than 0');
    const mode = parseMode(args.flags.mode)!;
    const name = (args.flags.name as string | undefined) ?? hostname().toLowerCase();
    const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined, io.env);
    const log = (line: string) => io.err(`kdp node join ${name}: ${line}\n`);
    const [{ joinCluster, nodeClientOf }, { startNodeProcess, runNodeUntilInterrupted }, { readClusterInfo }] =
      await Promise.all([import('../../bootstrap/join.js'), import('../../cluster/node-process.js'),
        import('../../cluster/cluster-file.js')]);
    const paths = dataDirPaths(dataDir);
    // Beside a netns `kdp up` in the same data dir (simulated hosts), its data plane is the node's,
    // as for `kdp node`; on a machine of its own there is none (virtual runtime).
    let cluster: ReturnType<typeof readClusterInfo> | undefined;
    try { cluster = readClusterInfo(paths); } catch { /* no kdp up in this data dir */ }
    const simulatedHost = cluster ? undefined : await simulatedHostHere(args.flags.host as number | undefined, log);
    if (simulatedHost && io.env.KDP_LAB_DATA_DIR) linkRulesIntoLab(io.env.KDP_LAB_DATA_DIR, simulatedHost, paths.root, name, log);
    const started = Date.now();
    const joined = await joinCluster({ server, token: args.flags.token as string,
      caCertHashes: (args.flags['discovery-token-ca-cert-hash'] as string[] | undefined) ?? [],
      unsafeSkipCaVerification: args.flags['discovery-token-unsafe-skip-ca-verification'] as boolean,
      discoveryTimeoutMs: duration('discovery-timeout', args.flags['discovery-timeout']),
      nodeName: name, dataDir, log });
    log(`credentials in ${joined.kubeconfig} (${Date.now() - started} ms)`);
    const nodeIPs = (args.flags['node-ip'] as string | undefined)?.split(',').map((s) => s.trim()).filter(Boolean);
    // The kubelet acts as system:node:<name>; kube-proxy, the policy agent and the shared
    // informers with the node agents' ServiceAccount token (bootstrap/join.ts).
    const agents = nodeClientOf(joined.agentKubeconfig);
    const node = await startNodeProcess({ paths, kubeconfig: joined.kubeconfig, cluster,
      client: agents, clients: { kubelet: nodeClientOf(joined.kubeconfig), kubeProxy: agents },
      name, proxyMode: mode, factor: 1 / scale, serverTlsBootstrap: true, ...(simulatedHost ? { simulatedHost } : {}),
      ...(args.flags.host !== undefined && !simulatedHost ? { host: (args.flags.host as number) - 1 } : {}),
      ...(nodeIPs?.length ? { nodeIPs } : {}),
      kubeProxyConfig: args.flags['kube-proxy-config']
        ? await readInput(args.flags['kube-proxy-config'] as string, '--kube-proxy-config') : undefined,
      log: (line) => io.err(`kdp node ${name}: ${line}\n`) });
    await runNodeUntilInterrupted(node, { name, proxyMode: mode, interrupted: io.interrupted, err: (t) => io.err(t) });
    return 0;
  },
};
