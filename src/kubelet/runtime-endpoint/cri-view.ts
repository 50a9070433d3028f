// The node runtime's state as CRI messages (k8s.io/cri-api runtime/v1, in protojson's field
// names and value shapes: enums by name, int64 as decimal strings, nanosecond timestamps), built
// from the runtime's sandbox records. Pure: the runtime endpoint server answers with these.
//
// A container is listed the way a CRI runtime holds it: a running or exited container under its
// current ID, and the previous run (the one `logs --previous` shows) exited under its own ID; a
// container still waiting for its first start has no runtime container yet.

import { kdpError } from '../../errors.js';
import type { RuntimeContainerStatus, RuntimeSandboxRecord } from '../runtime.js';
import { containerId, imageId, normalizeImageRef, sandboxId } from './ids.js';

export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export interface ImageSpec {
  readonly image: string;
  readonly annotations: Record<string, string>;
  readonly userSpecifiedImage: string;
  readonly runtimeHandler: string;
}

export interface CriPodSandbox {
  readonly id: string;
  readonly metadata: { name: string; uid: string; namespace: string; attempt: number };
  readonly state: SandboxState;
  readonly createdAt: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly runtimeHandler: string;
}

export interface CriContainer {
  readonly id: string;
  readonly podSandboxId: string;
  readonly metadata: { name: string; attempt: number };
  readonly image: ImageSpec;
  readonly imageRef: string;
  readonly state: ContainerState;
  readonly createdAt: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly imageId: string;
}

export interface CriImage {
  readonly id: string;
  readonly repoTags: string[];
  readonly repoDigests: string[];
  readonly size: string;
  readonly uid: null;
  readonly username: string;
  readonly spec: ImageSpec;
  readonly pinned: boolean;
}

/** A listed container with what the endpoint needs besides the CRI message. */
export interface ContainerEntry {
  readonly container: CriContainer;
  readonly record: RuntimeSandboxRecord;
  /** The kubelet's name for it, and whether it is the previous run (logs --previous). */
  readonly name: string;
  readonly previous: boolean;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly exitCode?: number;
  readonly reason?: string;
  readonly message?: string;
}

export interface SandboxFilter {
  readonly id?: string;
  readonly state?: SandboxState;
  readonly labelSelector?: Record<string, string>;
}

export interface ContainerFilter {
  readonly id?: string;
  readonly podSandboxId?: string;
  readonly state?: ContainerState;
  readonly labelSelector?: Record<string, string>;
}

/** Nanoseconds since the epoch, as protojson writes an int64. */
const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;
const isoMs = (iso: string | undefined) => (iso ? Date.parse(iso) : NaN);

export function imageSpec(ref: string): ImageSpec {
  return { image: imageId(ref), annotations: {}, userSpecifiedImage: ref, runtimeHandler: '' };
}

/** The sandbox's labels as the kubelet sets them: the pod's, plus its identity. */
function sandboxLabels(r: RuntimeSandboxRecord): Record<string, string> {
  const m = r.pod.metadata;
  return { ...(m.labels ?? {}), 'io.kubernetes.pod.name': m.name ?? '',
    'io.kubernetes.pod.namespace': m.namespace ?? 'default', 'io.kubernetes.pod.uid': m.uid ?? '' };
}

export function podSandbox(r: RuntimeSandboxRecord): CriPodSandbox {
  const m = r.pod.metadata;
  return {
    id: sandboxId(m.uid ?? ''),
    metadata: { name: m.name ?? '', uid: m.uid ?? '', namespace: m.namespace ?? 'default', attempt: 0 },
    state: r.ready ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
    createdAt: nanos(r.createdAtMs),
    labels: sandboxLabels(r),
    annotations: { ...(r.pod.metadata.annotations ?? {}) },
    runtimeHandler: '',
  };
}

const idOf = (url: string | undefined) => (url ?? '').replace(/^[a-z]+:\/\//, '');

function imageOf(r: RuntimeSandboxRecord, name: string, fallback?: string): string {
  const spec = [...(r.pod.spec?.initContainers ?? []), ...(r.pod.spec?.containers ?? [])]
    .find((c) => c.name === name);
  return spec?.image ?? fallback ?? '';
}

function entry(r: RuntimeSandboxRecord, c: RuntimeContainerStatus, prev: boolean): ContainerEntry | undefined {
  const uid = r.pod.metadata.uid ?? '';
  const last = c.lastTerminated;
  const attempt = prev ? Math.max(0, c.restartCount - (c.state === 'waiting' ? 0 : 1)) : c.restartCount;
  const id = prev ? idOf(last?.containerID) || containerId(uid, c.name, attempt) : idOf(c.containerID)
    || containerId(uid, c.name, attempt);
  const state: ContainerState = prev ? 'CONTAINER_EXITED' : c.state === 'running' ? 'CONTAINER_RUNNING'
    : c.state === 'exited' ? 'CONTAINER_EXITED' : 'CONTAINER_CREATED';
  const startedAt = prev ? last?.startedAt : c.startedAt;
  const ref = imageOf(r, c.name, c.imageID);
  const created = isoMs(startedAt);
  const container: CriContainer = {
    id, podSandboxId: sandboxId(uid), metadata: { name: c.name, attempt },
    image: imageSpec(ref), imageRef: imageId(ref), state,
    createdAt: nanos(Number.isNaN(created) ? r.createdAtMs : created),
    labels: { 'io.kubernetes.container.name': c.name, 'io.kubernetes.pod.name': r.pod.metadata.name ?? '',
      'io.kubernetes.pod.namespace': r.pod.metadata.namespace ?? 'default', 'io.kubernetes.pod.uid': uid },
    annotations: { 'io.kubernetes.container.restartCount': String(attempt) },
    imageId: imageId(ref),
  };
  return {
    container, record: r, name: c.name, previous: prev, startedAt,
    finishedAt: prev ? last?.finishedAt : c.finishedAt,
    exitCode: prev ? last?.exitCode : c.exitCode,
    reason: prev ? last?.reason : c.reason,
    message: prev ? undefined : c.message,
  };
}

/** Every container the runtime holds, newest first (crictl's order). */
export function containerEntries(records: readonly RuntimeSandboxRecord[]): ContainerEntry[] {
  const out: ContainerEntry[] = [];
  for (const r of records) {
    for (const c of [...(r.status.initContainers ?? []), ...r.status.containers]) {
      if (c.lastTerminated) out.push(entry(r, c, true)!);
      // A container waiting for its first start (or for a restart) has no runtime container.
      if (c.state !== 'waiting') out.push(entry(r, c, false)!);
    }
  }
  return out.sort((a, b) => Number(BigInt(b.container.createdAt) - BigInt(a.container.createdAt)));
}

const matches = (labels: Record<string, string>, sel?: Record<string, string>) =>
  !sel || Object.entries(sel).every(([k, v]) => labels[k] === v);

export function listPodSandbox(records: readonly RuntimeSandboxRecord[], f: SandboxFilter = {}): CriPodSandbox[] {
  return records.map(podSandbox)
    .filter((p) => (!f.id || p.id.startsWith(f.id)) && (!f.state || p.state === f.state)
      && matches(p.labels, f.labelSelector))
    .sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)));
}

export function listContainers(records: readonly RuntimeSandboxRecord[], f: ContainerFilter = {}): CriContainer[] {
  return containerEntries(records).map((e) => e.container)
    .filter((c) => (!f.id || c.id.startsWith(f.id)) && (!f.podSandboxId || c.podSandboxId.startsWith(f.podSandboxId))
      && (!f.state || c.state === f.state) && matches(c.labels, f.labelSelector));
}

/** One image per reference the node's pods use (kdp pulls nothing: size 0). */
export function listImages(records: readonly RuntimeSandboxRecord[]): CriImage[] {
  const refs = new Map<string, string>();
  for (const r of records) {
    for (const c of [...(r.pod.spec?.initContainers ?? []), ...(r.pod.spec?.containers ?? [])]) {
      const ref = c.image ?? 'kdp/echo';
      refs.set(normalizeImageRef(ref), ref);
    }
  }
  return [...refs].sort(([a], [b]) => a.localeCompare(b)).map(([tag, ref]) => ({
    id: imageId(ref), repoTags: [tag], repoDigests: [], size: '0', uid: null, username: '',
    spec: imageSpec(ref), pinned: false,
  }));
}

/**
 * The one item whose ID starts with `prefix` (crictl accepts ID prefixes). KDP_NOT_FOUND when
 * none does, KDP_BAD_REQUEST when several do; both name the node and the prefix.
 */
export function resolveId<T>(items: readonly T[], idOf_: (t: T) => string, prefix: string, what: string,
  node: string): T {
  if (!/^[0-9a-f]{1,64}$/.test(prefix)) {
    throw kdpError('KDP_BAD_REQUEST', `${what} ID "${prefix}": expected hexadecimal digits (an ID or its prefix)`);
  }
  const hits = new Map<string, T>();
  for (const t of items) if (idOf_(t).startsWith(prefix)) hits.set(idOf_(t), t);
  if (hits.size === 0) throw kdpError('KDP_NOT_FOUND', `node ${node}: no ${what} with ID "${prefix}"`);
  if (hits.size > 1) {
    throw kdpError('KDP_BAD_REQUEST', `node ${node}: ${what} ID prefix "${prefix}" is ambiguous ` +
      `(${[...hits.keys()].map((k) => k.slice(0, 13)).join(', ')})`);
  }
  return hits.values().next().value!;
}

/** PodSandboxStatus (verbose): the status and the runtime's info, as `crictl inspectp` prints. */
export function podSandboxStatus(r: RuntimeSandboxRecord) {
  const p = podSandbox(r);
  const [ip, ...more] = r.status.podIPs;
  return {
    status: {
      id: p.id, metadata: p.metadata, state: p.state, createdAt: p.createdAt,
      network: { ip: ip ?? '', additionalIps: more.map((x) => ({ ip: x })) },
      linux: { namespaces: { options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD', targetId: '',
        usernsOptions: null } } },
      labels: p.labels, annotations: p.annotations, runtimeHandler: '', containersStatuses: [],
    },
    info: {
      pid: 0, netns: r.netns ? `/run/netns/${r.netns}` : '', runtime: r.netns ? 'kdp-netns' : 'kdp-virtual',
      podUid: r.pod.metadata.uid ?? '',
    },
  };
}

/** ContainerStatus (verbose), as `crictl inspect` prints; `logPath`: the run's CRI log file. */
export function containerStatus(e: ContainerEntry, logPath = '') {
  const c = e.container;
  const ns = (iso?: string) => (iso ? nanos(Date.parse(iso)) : '0');
  return {
    status: {
      id: c.id, metadata: c.metadata, state: c.state, createdAt: c.createdAt,
      startedAt: ns(e.startedAt), finishedAt: c.state === 'CONTAINER_EXITED' ? ns(e.finishedAt) : '0',
      exitCode: e.exitCode ?? 0, image: c.image, imageRef: c.imageRef, reason: e.reason ?? '',
      message: e.message ?? '', labels: c.labels, annotations: c.annotations, mounts: [], logPath,
      resources: null, user: null, imageId: c.imageId, stopSignal: 'SIGTERM',
    },
    info: { sandboxID: c.podSandboxId, podUid: e.record.pod.metadata.uid ?? '', previousRun: e.previous },
  };
}
