// Static pods and their mirror pods, as the kubelet keeps them (pkg/kubelet/pod/mirror_client.go,
// config/common.go): a static pod (a manifest the kubelet runs without the API server) is shown
// to the cluster as a mirror pod `<name>-<node>` with the annotations kubernetes.io/config.hash
// = config.mirror (the manifest's hash), config.seen and config.source=file, owned by its Node
// (controller, no blockOwnerDeletion: what NodeRestriction requires). The kubelet re-creates a
// deleted mirror pod and replaces one whose hash differs, and reports its status. kdp's control
// plane runs in kdp's own process, so `kdp up` declares it as static pods of the first node
// with that process's PID as their containers' (the `kdp://PID` container ID).

import { createHash } from 'node:crypto';
import type { Pod } from '../api/types.js';
import type { Client, KubeObject } from '../client/types.js';

export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
export const HASH_ANNOTATION = 'kubernetes.io/config.hash';
const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

export interface StaticPod {
  /** The manifest as a file would hold it (name without the node suffix, namespace). */
  readonly manifest: Pod;
  /** The process running it (its containers' ID), when it is one. */
  readonly pid?: number;
}

export interface MirrorPodKeeper {
  /** Creates (or fixes) every mirror pod and reports its status. */
  sync(): Promise<void>;
  start(): Promise<void>;
  stop(): void;
}

/** The manifest's hash, as the kubelet's (a hex digest of the object as read). */
export function manifestHash(manifest: Pod): string {
  return createHash('sha256').update(JSON.stringify(manifest)).digest('hex').slice(0, 32);
}

export function isMirrorPod(pod: KubeObject): boolean {
  return pod.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined;
}

export function buildMirrorPodKeeper(o: {
  client: Client; nodeName: string; nodeIPs: readonly string[]; pods: readonly StaticPod[];
  /** How often deleted or stale mirror pods are put back (the kubelet's sync). Default 10 s. */
  periodMs?: number; now?: () => Date; onError?: (e: unknown) => void;
}): MirrorPodKeeper {
  const now = o.now ?? (() => new Date());
  const seen = now().toISOString().replace(/\.\d+Z$/, 'Z');
  const started = seen;
  let timer: NodeJS.Timeout | undefined;
  let nodeUid: string | undefined;

  function mirrorOf(s: StaticPod): Pod {
    const m = s.manifest;
    const hash = manifestHash(m);
    return {
      ...m,
      metadata: {
        ...m.metadata, name: `${m.metadata.name}-${o.nodeName}`, namespace: m.metadata.namespace ?? 'default',
        annotations: { ...(m.metadata.annotations ?? {}), [HASH_ANNOTATION]: hash, [MIRROR_ANNOTATION]: hash,
          'kubernetes.io/config.seen': seen, 'kubernetes.io/config.source': 'file' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: o.nodeName, uid: nodeUid!, controller: true }],
      },
      spec: { ...m.spec!, nodeName: o.nodeName },
    } as Pod;
  }

  function statusOf(s: StaticPod): Pod['status'] {
    const ips = o.nodeIPs.map((ip) => ({ ip }));
    const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: started });
    return {
      phase: 'Running', hostIP: o.nodeIPs[0], hostIPs: ips, podIP: o.nodeIPs[0], podIPs: ips,
      startTime: started, qosClass: 'Burstable',
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(cond),
      containerStatuses: (s.manifest.spec?.containers ?? []).map((c) => ({
        name: c.name, image: c.image ?? '', imageID: '', ready: true, started: true, restartCount: 0,
        ...(s.pid ? { containerID: `kdp://${s.pid}` } : {}),
        state: { running: { startedAt: started } },
      })),
    } as Pod['status'];
  }

  async function ensure(s: StaticPod, bound: readonly Pod[]): Promise<void> {
    const want = mirrorOf(s);
    const ns = want.metadata.namespace!;
    const ref = { ...PODS, namespace: ns };
    let have = bound.find((p) => p.metadata.namespace === ns && p.metadata.name === want.metadata.name);
    if (have && (have.metadata.deletionTimestamp ||
        have.metadata.annotations?.[MIRROR_ANNOTATION] !== want.metadata.annotations![MIRROR_ANNOTATION])) {
      // Being deleted, stale (another manifest) or not a mirror pod at all: the kubelet deletes
      // it at once (the static pod itself runs on) and re-creates it.
      await o.client.delete(ref, want.metadata.name!, { gracePeriodSeconds: 0 }).catch(() => undefined);
      have = undefined;
    }
    if (!have) have = await o.client.create<Pod>(ref, want);
    if (have.status?.phase === 'Running' && have.status.containerStatuses?.every((c) => c.ready)) return;
    await o.client.update(ref, { ...have, status: statusOf(s) } as KubeObject, { subresource: 'status' });
  }

  async function sync(): Promise<void> {
    if (!nodeUid) nodeUid = (await o.client.get(NODES, o.nodeName)).metadata.uid;
    // A node may list the pods bound to it (the Node authorizer refuses `get` of a pod it has
    // no edge to yet, as a mirror pod before it exists).
    const bound = (await o.client.list<Pod>(PODS, { fieldSelector: `spec.nodeName=${o.nodeName}` })).items;
    for (const s of o.pods) await ensure(s, bound);
  }

  return {
    sync,
    async start() {
      await sync();
      timer = setInterval(() => { sync().catch((e) => o.onError?.(e)); }, o.periodMs ?? 10_000);
      timer.unref?.();
    },
    stop() { clearInterval(timer); },
  };
}
