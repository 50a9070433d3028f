// `kdp netns POD|NODE` prints the network namespace of a pod or node of the running netns-mode
// cluster (a pod's is named from a hash of its UID, so it cannot be guessed); `kdp sh POD|NODE
// [-- CMD ARGS...]` runs a shell, or the command, inside it — `ip netns exec` without the
// lookup. A name is a node when the cluster has a node of that name, else a pod (`-n` sets the
// pod's namespace); `node/NAME` and `pod/NAME` say which outright. A simulated host (`kdp up
// --hosts N`) is `hK` (`host/hK` outright; h1 is the underlay namespace): `kdp sh h2 -- CMD` runs
// CMD as on that host, e.g. `kdp node join` (lab only: the join then places its node there). The command's own argument
// vector is run as given (no shell unless it is one), with the terminal handed over.

import { readClusterInfo, type ClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir, type DataDirPaths } from '../../cluster/data-dir.js';
import { hostSpawner } from '../../host/spawn.js';
import { clusterId, clusterPrefix, loadTopology } from '../../host/topology.js';
import { hostUnderlay, SINGLE_HOST } from '../../host/hosts.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import type { Pod } from '../../api/types.js';
import { kdpError } from '../../errors.js';
import type { Command } from '../command.js';
import type { FlagValues } from '../flags.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

const NAMESPACE_FLAG = { name: 'namespace', short: 'n', type: 'string', default: 'default',
  help: 'the pod\'s namespace' } as const;

export interface NetnsTarget {
  readonly kind: 'node' | 'pod' | 'host';
  /** `n1`, or `default/web-1`. */
  readonly name: string;
  readonly netns: string;
}

/** The namespace of `ref` in the cluster of `paths` (netns mode only). */
export async function resolveNetnsTarget(paths: DataDirPaths, ref: string | undefined,
  flags: FlagValues): Promise<NetnsTarget> {
  if (!ref) throw kdpError('KDP_CONFIG', 'name a pod or a node (e.g. web-1, n1, pod/web-1)');
  const info = readClusterInfo(paths);
  if (info.mode !== 'netns') {
    throw kdpError('KDP_CONFIG', `the cluster in ${paths.root} runs in virtual mode: it has no ` +
      'network namespaces (`sudo kdp up` makes them)');
  }
  const prefix = clusterPrefix(clusterId(paths.root));
  const [kind, name] = ref.startsWith('node/') ? ['node', ref.slice(5)] :
    ref.startsWith('pod/') ? ['pod', ref.slice(4)] : ref.startsWith('host/') ? ['host', ref.slice(5)] :
      [info.nodes.some((n) => n.name === ref) ? 'node' : info.hosts && /^h\d+$/.test(ref) ? 'host' : 'pod', ref];
  if (kind === 'host') {
    const layout = info.hosts ?? SINGLE_HOST;
    const k = /^h(\d+)$/.exec(name!) ? Number(name!.slice(1)) : NaN;
    if (!(Number.isInteger(k) && k >= 1 && k <= layout.count)) {
      throw kdpError('KDP_NOT_FOUND', `host ${name} is not one of ${Array.from({ length: layout.count }, (_, i) => `h${i + 1}`).join(', ')}`);
    }
    return { kind, name: name!, netns: hostUnderlay(loadTopology(), prefix, layout, k - 1).netns };
  }
  if (kind === 'node') {
    if (!info.nodes.some((n) => n.name === name)) {
      throw kdpError('KDP_NOT_FOUND', `node ${name} is not one of ${info.nodes.map((n) => n.name).join(', ')}`);
    }
    return { kind, name: name!, netns: `${prefix}-${name}` };
  }
  const ns = flags.namespace as string;
  const pod = await readPod(info, ns, name!);
  if (!pod.spec?.nodeName) throw kdpError('KDP_BAD_REQUEST', `pod ${ns}/${name} is not scheduled yet`);
  if (pod.spec.hostNetwork) {
    return { kind: 'pod', name: `${ns}/${name}`, netns: `${prefix}-${pod.spec.nodeName}` };
  }
  const { podNetnsName } = await import('../../kubelet/runtime-netns.js');
  return { kind: 'pod', name: `${ns}/${name}`, netns: podNetnsName(prefix, pod.metadata.uid!) };
}

async function readPod(info: ClusterInfo, ns: string, name: string): Promise<Pod> {
  const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
  return client.get<Pod>({ group: '', version: 'v1', resource: 'pods', namespace: ns }, name);
}

const pathsOf = (flags: FlagValues, env: Readonly<Record<string, string | undefined>>) =>
  dataDirPaths(resolveDataDir(flags['data-dir'] as string | undefined, env));

export const netnsCommand: Command = {
  name: 'netns',
  summary: 'print the network namespace of a pod, node or simulated host hK (netns mode)',
  args: 'POD|NODE|HOST',
  flags: [NAMESPACE_FLAG, DATA_DIR_FLAG],
  async run(args, io) {
    const t = await resolveNetnsTarget(pathsOf(args.flags, io.env), args.positionals[0], args.flags);
    io.out(`${t.netns}\n`);
    return 0;
  },
};

export const shCommand: Command = {
  name: 'sh',
  summary: 'run a shell (or -- CMD ARGS...) in the network namespace of a pod, node or simulated host hK (root)',
  args: 'POD|NODE|HOST [-- CMD ARGS...]',
  flags: [NAMESPACE_FLAG, DATA_DIR_FLAG],
  async run(args, io) {
    const paths = pathsOf(args.flags, io.env);
    const t = await resolveNetnsTarget(paths, args.positionals[0], args.flags);
    const cmd = args.positionals.length > 1 ? args.positionals.slice(1)
      : [io.env.SHELL || '/bin/sh'];
    const child = hostSpawner.spawn('nsenter', [`--net=/run/netns/${t.netns}`, '--', ...cmd],
      { stdio: ['inherit', 'inherit', 'inherit'], env: { ...io.env, KDP_NETNS: t.netns,
        // The lab's data dir, for a `kdp node join` run on a simulated host (it links its
        // node's rule snapshots there, where `kdp verify` and `kdp trace` read them).
        KDP_LAB_DATA_DIR: paths.root } });
    return new Promise((resolve, reject) => {
      child.once('error', (e) => reject(kdpError('KDP_UNAVAILABLE', `nsenter: ${e.message}`)));
      child.once('exit', (code, sig) => resolve(code ?? (sig ? 128 + (signalNumber(sig) ?? 0) : 1)));
    });
  },
};

function signalNumber(sig: NodeJS.Signals): number | undefined {
  return ({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[sig];
}
