// `kdp node join https://HOST:PORT --token T --discovery-token-ca-cert-hash sha256:H`: kubeadm
// join's TLS bootstrap (bootstrap/join.ts) for this machine's node, then the node agent exactly
// as `kdp node --name N` runs it (cluster/node-process.ts), under the node's new certificate;
// its kubelet then gets its serving certificate by a kubelet-serving CSR (serverTLSBootstrap).

import { hostname } from 'node:os';
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
    { name: 'host', type: 'number', help: 'beside a netns `kdp up --hosts N` in the same data dir: the simulated host (1..N) whose underlay the node joins (as `kdp node --host`)' },
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
      name, proxyMode: mode, factor: 1 / scale, serverTlsBootstrap: true,
      ...(args.flags.host !== undefined ? { host: (args.flags.host as number) - 1 } : {}),
      ...(nodeIPs?.length ? { nodeIPs } : {}),
      kubeProxyConfig: args.flags['kube-proxy-config']
        ? await readInput(args.flags['kube-proxy-config'] as string, '--kube-proxy-config') : undefined,
      log: (line) => io.err(`kdp node ${name}: ${line}\n`) });
    await runNodeUntilInterrupted(node, { name, proxyMode: mode, interrupted: io.interrupted, err: (t) => io.err(t) });
    return 0;
  },
};
