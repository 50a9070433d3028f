// The netns runtime's options (../runtime-netns.ts builds the runtime from them): the node's
// kernel boundary (exec, state file, namespaces, launcher, prober), its CNI network, and what the
// kubelet gives each pod (DNS, volumes, ConfigMap/Secret data, the API Service's address).

import type { Pod } from '../../api/types.js';
import type { HostExec } from '../../host/exec.js';
import type { Launcher } from '../../host/launcher.js';
import type { SandboxNetns } from '../../host/netns.js';
import type { HostStateFile } from '../../host/state.js';
import type { ContainerLogStore } from '../container-log-files.js';
import type { EchoCommand } from '../echo-command.js';
import type { PodMountDeps } from '../pod-mounts.js';
import type { Prober } from '../prober.js';
import type { KubeletDnsConfig } from '../resolv-conf.js';

export interface NetnsRuntimeOptions {
  readonly exec: HostExec;
  readonly state: HostStateFile;
  /** The cluster prefix (`kdp-<id>`); pod namespaces are `<prefix>-p-<hash>`. */
  readonly prefix: string;
  /** The node's namespace: where the CNI plugin runs. */
  readonly nodeNetns: string;
  /** host-local's data dir for this node. */
  readonly ipamDir: string;
  readonly podBridge?: string;
  /** CNI conf dir (first file by name); default: the built-in kdp-cni bridge network. */
  readonly cniConfDir?: string;
  /** CNI_PATH for exec'd plugins; default /usr/lib/cni. */
  readonly cniBinDirs?: readonly string[];
  /** The built-in network's pod MTU (cni-caller.ts); default the plugin's. */
  readonly podMtu?: number;
  readonly killGraceMs?: number;
  /** The workload program; default the JS echo (`echoScript`, default bin/kdp-echo.js). */
  readonly echo?: EchoCommand;
  readonly echoScript?: string;
  /** Probes from the node namespace; default a helper prober started there on first use. */
  readonly prober?: Prober;
  /** Starts workload processes; default a helper launcher of this runtime's own (host/launcher.ts). */
  readonly launcher?: Launcher;
  /** Makes and removes pod namespaces; default ip sessions of this runtime's own. */
  readonly sandboxNetns?: SandboxNetns;
  /** Multiplies probe periods and restart back-off (the agent's timeScale). Default 1. */
  readonly timeScale?: number;
  /** Called after CNI ADD gave a pod its IPs and before its sandbox and containers start (the
   *  node's NetworkPolicy controller programs the pod's verdicts here, so a pod a policy
   *  isolates is isolated from its first packet). A rejection fails the sandbox (CNI DEL, the
   *  kubelet's sync retries): no container starts unprogrammed. */
  readonly beforeContainers?: (pod: Pod, podIPs: readonly string[]) => Promise<void>;
  /** The node's IPs (status.hostIP(s) in env) and name. */
  readonly nodeIPs?: readonly string[];
  readonly nodeName?: string;
  /** ConfigMap/Secret data for env (configMapKeyRef, secretKeyRef, envFrom); absent: every
   *  such reference fails the container with CreateContainerConfigError. */
  readonly lookup?: (namespace: string, resource: 'configmaps' | 'secrets', name: string) =>
    Promise<Record<string, string> | undefined>;
  /** Where each pod's own files go (`<podsDir>/<uid>`): given, every pod gets its mount, UTS and
   *  IPC namespaces (pod-mounts.ts: hostname, /etc/resolv.conf and hosts, /tmp, volumes) and
   *  kdp/dns runs the DNS server; absent, containers share the host's files. */
  readonly podsDir?: string;
  /** The kubelet's DNS settings for each pod's resolv.conf (asked at each pod start). */
  readonly dns?: () => Promise<KubeletDnsConfig>;
  readonly volumeFiles?: PodMountDeps['volumeFiles'];
  /** The `kubernetes` Service's address: every container gets KUBERNETES_SERVICE_HOST/PORT and
   *  the link variables of it, as upstream's kubelet gives (in-cluster clients need them). */
  readonly apiService?: () => Promise<{ host: string; port: number } | undefined>;
  /** The Python that runs the namespace holder; default /usr/bin/python3, else python3. */
  readonly python?: string;
  /** Where containers' output goes (the node's CRI log files); default in memory. */
  readonly logStore?: ContainerLogStore;
}
