// The netns runtime: a pod sandbox is a network namespace (`<prefix>-p-<hash of uid>`) wired by
// the CNI plugin, called in-process with the node's namespace as the plugin's own (bridge `cni0`,
// isGateway, no ipMasq, host-local over the node's podCIDR); containers are processes started in
// the pod namespace with `ip netns exec`. Every image runs the `kdp/echo` workload
// (bin/kdp-echo.js) on the container's declared ports; a container turns ready once it prints
// `ready`. Stop = SIGTERM, SIGKILL after `killGraceMs`; then CNI DEL and the namespace goes.
// Namespaces and processes are recorded in the host state file (before creation for namespaces)
// so `kdp down` can remove them after a crash.

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pod } from '../api/types.js';
import { runCniPlugin } from '../cni/plugin.js';
import { kdpError } from '../errors.js';
import type { HostExec } from '../host/exec.js';
import { deleteNetns, ensureNetns } from '../host/netns.js';
import { recordProcess } from '../host/process.js';
import type { HostStateFile } from '../host/state.js';
import type { NodeNetwork, Runtime, RuntimeContainerStatus, RuntimePodStatus } from './runtime.js';
import { containerLogText } from './runtime.js';

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
  readonly killGraceMs?: number;
  readonly echoScript?: string;
}

const ECHO = fileURLToPath(new URL('../../bin/kdp-echo.js', import.meta.url));
const MAX_LOG_LINES = 1000;

interface Container {
  status: RuntimeContainerStatus;
  child?: ChildProcess;
  log: string[];
}

interface Sandbox {
  readonly uid: string;
  readonly pod: Pod;
  readonly netns: string;
  readonly net: NodeNetwork;
  podIPs: string[];
  readonly containers: Map<string, Container>;
  stopping: boolean;
}

export function podNetnsName(prefix: string, uid: string): string {
  return `${prefix}-p-${createHash('sha256').update(uid).digest('hex').slice(0, 10)}`;
}

export function buildNetnsRuntime(o: NetnsRuntimeOptions): Runtime {
  const sandboxes = new Map<string, Sandbox>();
  const starting = new Map<string, Promise<RuntimePodStatus>>();
  let listener: (uid: string) => void = () => {};
  const iso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

  function status(sb: Sandbox): RuntimePodStatus {
    return { uid: sb.uid, podIPs: [...sb.podIPs], containers: [...sb.containers.values()].map((c) => ({ ...c.status })) };
  }

  async function cni(command: 'ADD' | 'DEL', pod: Pod, netns: string, net: NodeNetwork): Promise<string> {
    const conf = {
      cniVersion: '1.0.0', name: 'kdp', type: 'kdp-cni', bridge: o.podBridge ?? 'cni0',
      isGateway: true, ipMasq: false, hairpinMode: true,
      ipam: {
        type: 'host-local', dataDir: o.ipamDir, routes: [{ dst: '0.0.0.0/0' }],
        ranges: net.podCIDRs.filter((c) => !c.includes(':')).map((subnet) => [{ subnet }]),
      },
    };
    const env = {
      CNI_COMMAND: command, CNI_CONTAINERID: pod.metadata.uid!, CNI_NETNS: `/run/netns/${netns}`,
      CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni',
      CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.metadata.namespace ?? 'default'};K8S_POD_NAME=${pod.metadata.name}`,
    };
    const out = await runCniPlugin({ env, stdin: JSON.stringify(conf) }, { exec: o.exec, node: { name: o.nodeNetns } });
    if (out.exitCode !== 0) throw kdpError('KDP_HOST_EXEC', `CNI ${command} for pod ${pod.metadata.name}: ${out.stdout.trim()}`);
    return out.stdout;
  }

  function startContainer(sb: Sandbox, name: string): void {
    const spec = sb.pod.spec?.containers?.find((c) => c.name === name);
    const c = sb.containers.get(name)!;
    const ports = (spec?.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`).join(',');
    const child = spawn('ip', ['netns', 'exec', sb.netns, process.execPath, o.echoScript ?? ECHO], {
      env: { PATH: process.env.PATH, KDP_POD_NAME: sb.pod.metadata.name, KDP_ECHO_PORTS: ports },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid) o.state.addProcess(recordProcess(child.pid));
    c.child = child;
    c.status = { ...c.status, state: 'running', reason: undefined, startedAt: iso(), ready: false };
    const onLine = (chunk: Buffer) => {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) {
        c.log.push(l);
        if (c.log.length > MAX_LOG_LINES) c.log.shift();
        if (l.startsWith('ready ') && c.child === child && !c.status.ready) {
          c.status = { ...c.status, ready: true };
          listener(sb.uid);
        }
      }
    };
    child.stdout!.on('data', onLine);
    child.stderr!.on('data', onLine);
    child.on('exit', (code, signal) => {
      if (child.pid) o.state.removeProcess(child.pid);
      if (c.child !== child) return;
      c.child = undefined;
      const exitCode = code ?? (signal ? 128 + 9 : 1);
      c.status = {
        ...c.status, state: 'exited', ready: false, exitCode, finishedAt: iso(),
        reason: exitCode === 0 ? 'Completed' : 'Error',
      };
      if (sb.stopping || sandboxes.get(sb.uid) !== sb) return;
      listener(sb.uid);
      if ((sb.pod.spec?.restartPolicy ?? 'Always') === 'Always' || exitCode !== 0) {
        setTimeout(() => {
          if (sb.stopping || sandboxes.get(sb.uid) !== sb) return;
          c.status = { ...c.status, restartCount: c.status.restartCount + 1 };
          startContainer(sb, name);
          listener(sb.uid);
        }, 1000).unref();
      }
    });
  }

  async function create(pod: Pod, net: NodeNetwork): Promise<RuntimePodStatus> {
    const uid = pod.metadata.uid!;
    if (net.podCIDRs.length === 0) throw kdpError('KDP_UNAVAILABLE', 'node has no podCIDR yet');
    const netns = podNetnsName(o.prefix, uid);
    o.state.addNetns(netns);
    await ensureNetns(o.exec, netns);
    let result: { ips?: Array<{ address: string }> };
    try {
      result = JSON.parse(await cni('ADD', pod, netns, net));
    } catch (e) {
      await deleteNetns(o.exec, netns);
      o.state.removeNetns(netns);
      throw e;
    }
    const sb: Sandbox = {
      uid, pod, netns, net, podIPs: (result.ips ?? []).map((i) => i.address.split('/')[0]!),
      containers: new Map(), stopping: false,
    };
    for (const spec of pod.spec?.containers ?? []) {
      sb.containers.set(spec.name, {
        log: [], status: {
          name: spec.name, state: 'waiting', reason: 'ContainerCreating', ready: false, restartCount: 0,
          containerID: `kdp://${uid.slice(0, 8)}-${spec.name}`, imageID: spec.image ?? '',
        },
      });
    }
    sandboxes.set(uid, sb);
    for (const name of sb.containers.keys()) startContainer(sb, name);
    return status(sb);
  }

  async function stopProcesses(sb: Sandbox): Promise<void> {
    sb.stopping = true;
    const children = [...sb.containers.values()].map((c) => c.child).filter((c): c is ChildProcess => !!c);
    await Promise.all(children.map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) { resolve(); return; }
      const t = setTimeout(() => child.kill('SIGKILL'), o.killGraceMs ?? 2000);
      child.once('exit', () => { clearTimeout(t); resolve(); });
      child.kill('SIGTERM');
    })));
  }

  return {
    runPod(pod, net) {
      const uid = pod.metadata.uid!;
      const sb = sandboxes.get(uid);
      if (sb) return Promise.resolve(status(sb));
      let p = starting.get(uid);
      if (!p) {
        p = create(pod, net).finally(() => starting.delete(uid));
        starting.set(uid, p);
      }
      return p;
    },
    async killPod(uid) {
      await starting.get(uid)?.catch(() => undefined);
      const sb = sandboxes.get(uid);
      if (!sb) return;
      sandboxes.delete(uid);
      await stopProcesses(sb);
      await cni('DEL', sb.pod, sb.netns, sb.net).catch(() => undefined);
      await deleteNetns(o.exec, sb.netns);
      o.state.removeNetns(sb.netns);
    },
    podStatus: (uid) => {
      const sb = sandboxes.get(uid);
      return sb ? status(sb) : undefined;
    },
    listPods: () => [...sandboxes.keys()],
    logs: (uid, container) => containerLogText(sandboxes.get(uid), container),
    onChange(l) { listener = l; },
    async close() {
      for (const sb of sandboxes.values()) await stopProcesses(sb);
    },
  };
}

/** host-local's data dir for a node of the cluster in `dataDir`. */
export function ipamDirFor(dataDir: string, node: string): string {
  return join(dataDir, 'cni', node);
}
