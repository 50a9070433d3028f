// `kdp init`: `kdp up` in kubeadm init's shape — the control plane and its own node (n1, tainted
// node-role.kubernetes.io/control-plane:NoSchedule as kubeadm taints it, so workloads go to the
// nodes that join), then kubeadm's closing message with the `kdp node join … --token …
// --discovery-token-ca-cert-hash sha256:…` line for the other hosts. The same runner as `kdp up`
// (runUp): its flags, data plane, detach and shutdown; kubeadm's spellings of two flags too.

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ClusterInfo } from '../../cluster/cluster-file.js';
import { kdpError } from '../../errors.js';
import type { Command } from '../command.js';
import type { FlagSpec, FlagValues } from '../flags.js';
import { runUp, upCommand, type UpShape } from './up.js';

/** kubeadm init's flag names for what `kdp up` calls otherwise. */
const KUBEADM_ALIASES: ReadonlyArray<{ spec: FlagSpec; of: string }> = [
  { spec: { name: 'pod-network-cidr', type: 'string', help: 'kubeadm\'s name of --cluster-cidr' }, of: 'cluster-cidr' },
  { spec: { name: 'apiserver-bind-port', type: 'number', help: 'kubeadm\'s name of --port' }, of: 'port' },
];

/** `kdp up`'s flags as init takes them: one node by default, the control-plane taint always. */
const INIT_FLAGS: readonly FlagSpec[] = [
  ...upCommand.flags.filter((f) => f.name !== 'control-plane-taint').map((f) => (f.name === 'nodes'
    ? { ...f, default: 1, help: 'nodes to start here: the control-plane node n1 (tainted), and more untainted' } : f)),
  ...KUBEADM_ALIASES.map((a) => a.spec),
];

/** The flags runUp reads: the aliases moved to kdp up's names (both given: an error naming them). */
export function initUpFlags(flags: FlagValues): FlagValues {
  const out: FlagValues = { ...flags, 'control-plane-taint': true };
  for (const a of KUBEADM_ALIASES) {
    if (flags[a.spec.name] === undefined) continue;
    const explicit = flags[a.of] !== undefined && flags[a.of] !== upCommand.flags.find((f) => f.name === a.of)?.default;
    if (explicit) throw kdpError('KDP_CONFIG', `--${a.spec.name} and --${a.of}: the same setting, give one`);
    out[a.of] = flags[a.spec.name];
    delete out[a.spec.name];
  }
  return out;
}

/** kubeadm init's closing lines (cmd/kubeadm/app/cmd/init.go initDoneTempl), in kdp's terms. */
export function initMessage(info: Pick<ClusterInfo, 'kubeconfig' | 'mode' | 'proxyMode' | 'nodes' | 'backend' | 'hosts'>,
  dataDir: string, o: { readonly detached: boolean; readonly joinCommand: string }): string {
  const dd = resolve(dataDir) === resolve(join(homedir(), '.kdp')) ? '' : ` --data-dir ${dataDir}`;
  const cp = info.nodes[0]?.name ?? 'n1';
  const [head, pin] = o.joinCommand.split(' --discovery-token-ca-cert-hash ');
  const sudo = info.mode === 'netns' ? 'sudo ' : '';
  return [
    'Your Kubernetes control-plane has initialized successfully!',
    '',
    'To start using your cluster, run:',
    '',
    `  export KUBECONFIG=${info.kubeconfig}`,
    '',
    `The pod network is deployed already: the kube-system DaemonSets kdp-cni (backend ${info.backend ?? 'host-gw'})`,
    `and kube-proxy (${info.proxyMode}). The control-plane node ${cp} carries the taint`,
    'node-role.kubernetes.io/control-plane:NoSchedule, as kubeadm sets it; to run pods on it too:',
    '',
    `  kubectl taint nodes ${cp} node-role.kubernetes.io/control-plane:NoSchedule-`,
    '',
    'Then you can join any number of worker nodes by running the following on each as root:',
    '',
    pin === undefined ? o.joinCommand : `${head} \\\n\t--discovery-token-ca-cert-hash ${pin}`,
    '',
    ...(info.hosts && info.hosts.count > 1 ? [
      `On this lab's simulated hosts h2..h${info.hosts.count}, run it inside the host: ${sudo}kdp sh${dd} h2 -- kdp node join …`,
      '(with a --data-dir of its own for each host).', ''] : []),
    `The token is valid for 24h: \`kdp token create${dd} --print-join-command\` prints a new line.`,
    o.detached ? `Stop with \`kdp down${dd}\`.` : `Stop with Ctrl-C (or \`kdp down${dd}\`).`,
    '',
  ].join('\n');
}

const INIT_SHAPE: UpShape = {
  message: async (info, dataDir, o) => initMessage(info, dataDir, { detached: o.detached, joinCommand: await o.joinCommand() }),
};

export const initCommand: Command = {
  name: 'init',
  summary: 'start a control plane as kubeadm init does (its own node, tainted) and print the `kdp node join` command',
  flags: INIT_FLAGS,
  run: (args, io) => runUp({ ...args, flags: initUpFlags(args.flags) }, io, INIT_SHAPE),
};
