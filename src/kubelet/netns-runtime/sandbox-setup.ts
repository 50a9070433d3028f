// A pod sandbox's life outside its containers: the network namespace (recorded in the host
// state file before it is made, so `kdp down` can remove it after a crash), CNI ADD/DEL through
// the node's network config list (cni-caller.ts), the NetworkPolicy hook before any container,
// the pod's own files (pod-holder.ts), and the container table every container starts waiting
// in. A step that fails undoes the ones before it (CNI DEL, the namespace, the pod's files).

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Pod } from '../../api/types.js';
import { kdpError } from '../../errors.js';
import { buildRestartBackoff } from '../backoff.js';
import { removePodDir } from '../pod-mounts.js';
import { containerIdUrl } from '../runtime-endpoint/ids.js';
import type { NodeNetwork } from '../runtime.js';
import { isSidecar } from '../sidecars.js';
import { startHolder, stopHolder } from './pod-holder.js';
import type { ContainerState, NetnsPods, Sandbox } from './pods.js';

export function podNetnsName(prefix: string, uid: string): string {
  return `${prefix}-p-${createHash('sha256').update(uid).digest('hex').slice(0, 10)}`;
}

/** Makes the pod's namespace and attaches it to the pod network (CNI ADD); returns the sandbox
 *  with its IPs and no containers yet. On failure nothing is left behind. */
async function attachNetwork(ctx: NetnsPods, pod: Pod, net: NodeNetwork): Promise<Sandbox> {
  const uid = pod.metadata.uid!;
  if (net.podCIDRs.length === 0) throw kdpError('KDP_UNAVAILABLE', 'node has no podCIDR yet');
  const netns = podNetnsName(ctx.o.prefix, uid);
  await ctx.o.state.addNetns(netns);
  let ips: string[];
  try {
    await ctx.netnses.ensure(netns);
    const result = await ctx.podNetwork.attach(cniTarget(pod, netns, net)) as { ips?: Array<{ address: string }> };
    ips = (result.ips ?? []).map((i) => i.address.split('/')[0]!);
  } catch (e) {
    await dropNetns(ctx, netns);
    throw e;
  }
  return { uid, pod, netns, net, createdAtMs: Date.now(), podIPs: ips, containers: new Map(), stopping: false };
}

/** What the CNI caller needs of a pod. */
function cniTarget(pod: Pod, netns: string, net: NodeNetwork) {
  return {
    uid: pod.metadata.uid!, namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name!,
    netns, podCIDRs: net.podCIDRs,
  };
}

/** Removes a pod namespace and its record; one that could not go stays recorded, for host
 *  cleanup (close, `kdp down`) to remove. */
export async function dropNetns(ctx: NetnsPods, netns: string): Promise<void> {
  if (await ctx.netnses.remove(netns).then(() => true, () => false)) await ctx.o.state.removeNetns(netns);
}

/** Detaches the pod from the network (CNI DEL; a failure is left to host cleanup) and removes
 *  its namespace. */
export async function detachNetwork(ctx: NetnsPods, sb: Sandbox): Promise<void> {
  await ctx.podNetwork.detach(cniTarget(sb.pod, sb.netns, sb.net)).catch(() => undefined);
  await dropNetns(ctx, sb.netns);
}

/** A sandbox step failed: said on the pod as upstream's kubelet does (the sync retries), and the
 *  network, namespace and pod files undone. Rethrows `e`. */
async function failSandbox(ctx: NetnsPods, sb: Sandbox, why: string, e: unknown): Promise<never> {
  ctx.event(sb.uid, { type: 'Warning', reason: 'FailedCreatePodSandBox', fieldPath: '',
    message: `Failed to create pod sandbox: ${why}${(e as Error).message}` });
  await detachNetwork(ctx, sb);
  if (sb.podDir) removePodDir(sb.podDir);
  throw e;
}

/** Every container of the pod, waiting: init containers first in spec order, then the app
 *  containers; until the init containers are done all wait in PodInitializing (upstream's
 *  reason). */
function containerTable(ctx: NetnsPods, pod: Pod): Map<string, ContainerState> {
  const uid = pod.metadata.uid!;
  const inits = pod.spec?.initContainers ?? [];
  const table = new Map<string, ContainerState>();
  for (const [init, spec] of [...inits.map((s) => [true, s] as const),
    ...(pod.spec?.containers ?? []).map((s) => [false, s] as const)]) {
    table.set(spec.name, {
      backoff: buildRestartBackoff(ctx.scale), init, sidecar: init && isSidecar(spec), status: {
        name: spec.name, state: 'waiting', reason: inits.length ? 'PodInitializing' : 'ContainerCreating',
        ready: false, restartCount: 0, containerID: containerIdUrl(uid, spec.name, 0), imageID: spec.image ?? '',
      },
    });
  }
  return table;
}

/** The sandbox ready for its containers: network attached, policy programmed, pod files set up,
 *  containers waiting. Not yet in `ctx.sandboxes`. */
export async function createSandbox(ctx: NetnsPods, pod: Pod, net: NodeNetwork): Promise<Sandbox> {
  const sb = await attachNetwork(ctx, pod, net);
  if (ctx.o.beforeContainers) {
    await ctx.o.beforeContainers(pod, sb.podIPs)
      .catch((e) => failSandbox(ctx, sb, 'network policy not programmed: ', e));
  }
  if (ctx.o.podsDir) {
    await startHolder(ctx, sb, join(ctx.o.podsDir, sb.uid)).catch((e) => failSandbox(ctx, sb, '', e));
  }
  for (const [name, c] of containerTable(ctx, pod)) sb.containers.set(name, c);
  return sb;
}

/** Tears a stopped sandbox down: its namespace holder and files, CNI DEL, the namespace. */
export async function removeSandbox(ctx: NetnsPods, sb: Sandbox): Promise<void> {
  await stopHolder(sb);
  await detachNetwork(ctx, sb);
}
