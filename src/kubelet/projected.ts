// The files of a pod's projected, configMap, secret and downwardAPI volumes, as the kubelet's
// volume plugins write them (pkg/volume/projected, configmap, secret, downwardapi): items or
// every key, modes from the item, else the volume's defaultMode (0644), optional sources
// skipped when absent, a missing required one an error naming it (the kubelet's FailedMount).
// Service-account tokens come from TokenRequest bound to the pod (its name and uid), as the
// kubelet's token manager asks, for the projection's audience and expirationSeconds.

import type { Pod } from '../api/types.js';
import type { Client, KubeObject } from '../client/types.js';
import { kdpError } from '../errors.js';

export interface VolumeFile {
  /** Relative to the volume's root (no leading `/`, no `..`). */
  readonly path: string;
  readonly data: Buffer;
  readonly mode: number;
}

/** A service-account token with the time the kubelet renews it (80 % of its lifetime, at most
 *  24 h after issue, as upstream's token manager). */
export interface IssuedToken {
  readonly token: string;
  readonly expiresAt: number;
  readonly refreshAt: number;
}

export interface ProjectionDeps {
  readonly client: Client;
  readonly now?: () => number;
}

const DEFAULT_MODE = 0o644;
const CORE = { group: '', version: 'v1' } as const;

interface KeyToPath { key: string; path: string; mode?: number }
interface DataObject extends KubeObject { data?: Record<string, string>; binaryData?: Record<string, string> }
interface DownwardItem {
  path: string; mode?: number;
  fieldRef?: { fieldPath: string };
  resourceFieldRef?: { containerName?: string; resource: string; divisor?: string };
}
/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyVolume = Record<string, any> & { name: string };

function safePath(p: string, volume: string): string {
  if (!p || p.startsWith('/') || p.split('/').some((s) => s === '..' || s === '')) {
    throw kdpError('KDP_INVALID', `volume ${volume}: path ${JSON.stringify(p)} must be relative, without ".."`);
  }
  return p;
}

async function getOptional(client: Client, resource: 'configmaps' | 'secrets', ns: string, name: string):
  Promise<DataObject | undefined> {
  try {
    return await client.get<DataObject>({ ...CORE, resource, namespace: ns }, name);
  } catch (e) {
    if ((e as { code?: string }).code === 'KDP_NOT_FOUND') return undefined;
    throw e;
  }
}

/** configMap / secret content as files: `items` or every key (binaryData too), values decoded. */
async function keyFiles(
  deps: ProjectionDeps, pod: Pod, volume: string, kind: 'configmaps' | 'secrets',
  src: { name?: string; secretName?: string; items?: KeyToPath[]; optional?: boolean }, defaultMode: number,
): Promise<VolumeFile[]> {
  const name = src.name ?? src.secretName ?? '';
  const ns = pod.metadata.namespace ?? 'default';
  const obj = await getOptional(deps.client, kind, ns, name);
  const what = kind === 'configmaps' ? 'configmap' : 'secret';
  if (!obj) {
    if (src.optional) return [];
    throw kdpError('KDP_NOT_FOUND', `MountVolume.SetUp failed for volume "${volume}" : ${what} "${name}" not found`);
  }
  const values = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(obj.data ?? {})) {
    values.set(k, kind === 'secrets' ? Buffer.from(v, 'base64') : Buffer.from(v));
  }
  for (const [k, v] of Object.entries(obj.binaryData ?? {})) values.set(k, Buffer.from(v, 'base64'));
  if (!src.items?.length) {
    return [...values].sort(([a], [b]) => a.localeCompare(b))
      .map(([k, data]) => ({ path: safePath(k, volume), data, mode: defaultMode }));
  }
  const out: VolumeFile[] = [];
  for (const it of src.items) {
    const data = values.get(it.key);
    if (!data) {
      if (src.optional) continue;
      throw kdpError('KDP_NOT_FOUND', `MountVolume.SetUp failed for volume "${volume}" : configuration ` +
        `error: key "${it.key}" not found in ${what} ${ns}/${name}`);
    }
    out.push({ path: safePath(it.path, volume), data, mode: it.mode ?? defaultMode });
  }
  return out;
}

/** `key="value"` lines sorted by key, as the downward API formats a map. */
function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {}).sort().map((k) => `${k}=${JSON.stringify(m![k])}`).join('\n');
}

/** The metadata fields both env and volumes take (fieldpath.ExtractFieldPathAsString): name,
 *  namespace, uid, one label or annotation; undefined for any other path. */
export function metadataField(pod: Pod, fieldPath: string): string | undefined {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m) return (pod.metadata[m[1] as 'labels' | 'annotations'] ?? {})[m[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name': return pod.metadata.name ?? '';
    case 'metadata.namespace': return pod.metadata.namespace ?? 'default';
    case 'metadata.uid': return pod.metadata.uid ?? '';
    default: return undefined;
  }
}

/** A downward API fieldPath of the pod's metadata. */
export function downwardField(pod: Pod, fieldPath: string): string {
  const one = metadataField(pod, fieldPath);
  if (one !== undefined) return one;
  switch (fieldPath) {
    case 'metadata.labels': return formatMap(pod.metadata.labels);
    case 'metadata.annotations': return formatMap(pod.metadata.annotations);
    default:
      throw kdpError('KDP_INVALID', `downward API: fieldPath ${JSON.stringify(fieldPath)} is not supported ` +
        'in a volume (metadata.name, namespace, uid, labels, annotations)');
  }
}

function downwardFiles(pod: Pod, volume: string, items: DownwardItem[], defaultMode: number): VolumeFile[] {
  return items.map((it) => {
    if (!it.fieldRef) {
      throw kdpError('KDP_INVALID', `volume ${volume}: downward API item ${it.path}: only fieldRef is supported`);
    }
    return { path: safePath(it.path, volume), data: Buffer.from(downwardField(pod, it.fieldRef.fieldPath)),
      mode: it.mode ?? defaultMode };
  });
}

/** The kubelet's token manager (upstream pkg/kubelet/token): a pod's token is reused until its
 *  refresh time (80 % of its life, at most 24 h), so the periodic volume sync rewrites a projected
 *  token only when it is due. Keyed by everything the TokenRequest names, the pod's uid included. */
const tokenCache = new Map<string, IssuedToken>();

/** TokenRequest for the pod's ServiceAccount, bound to the pod (a cached one while not due). */
export async function requestPodToken(
  deps: ProjectionDeps, pod: Pod, o: { audience?: string; expirationSeconds?: number } = {},
): Promise<IssuedToken> {
  const ns = pod.metadata.namespace ?? 'default';
  const sa = pod.spec?.serviceAccountName || 'default';
  const expirationSeconds = o.expirationSeconds ?? 3600;
  const key = [ns, sa, o.audience ?? '', expirationSeconds, pod.metadata.name, pod.metadata.uid].join('/');
  const at = (deps.now ?? Date.now)();
  for (const [k, t] of tokenCache) if (t.expiresAt <= at) tokenCache.delete(k);
  const cached = tokenCache.get(key);
  if (cached && at < cached.refreshAt) return cached;
  const issued = await issuePodToken(deps, pod, ns, sa, expirationSeconds, o.audience);
  tokenCache.set(key, issued);
  return issued;
}

async function issuePodToken(deps: ProjectionDeps, pod: Pod, ns: string, sa: string, expirationSeconds: number,
  audience: string | undefined): Promise<IssuedToken> {
  const o = { audience };
  const tr = await deps.client.create<KubeObject & { status?: { token?: string; expirationTimestamp?: string } }>(
    { ...CORE, resource: 'serviceaccounts', namespace: ns },
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { name: sa, namespace: ns },
      spec: { audiences: o.audience ? [o.audience] : [], expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid } } } as never,
    { name: sa, subresource: 'token' });
  const token = tr.status?.token;
  if (!token) throw kdpError('KDP_INTERNAL', `TokenRequest for ${ns}/${sa} returned no token`);
  const now = (deps.now ?? Date.now)();
  const expiresAt = tr.status?.expirationTimestamp ? Date.parse(tr.status.expirationTimestamp)
    : now + expirationSeconds * 1000;
  const refreshAt = Math.min(now + 0.8 * (expiresAt - now), now + 24 * 3600_000);
  return { token, expiresAt, refreshAt };
}

/**
 * The files of `volume` of `pod` (configMap, secret, downwardAPI, projected); undefined for
 * any other kind (emptyDir, hostPath…: not file content). `tokens` is told of every token it
 * wrote, for renewal.
 */
export async function volumeFiles(
  deps: ProjectionDeps, pod: Pod, volume: AnyVolume, tokens?: (t: IssuedToken) => void,
): Promise<VolumeFile[] | undefined> {
  const v = volume.name;
  if (volume.configMap) {
    return keyFiles(deps, pod, v, 'configmaps', volume.configMap, volume.configMap.defaultMode ?? DEFAULT_MODE);
  }
  if (volume.secret) {
    return keyFiles(deps, pod, v, 'secrets', volume.secret, volume.secret.defaultMode ?? DEFAULT_MODE);
  }
  if (volume.downwardAPI) {
    return downwardFiles(pod, v, volume.downwardAPI.items ?? [], volume.downwardAPI.defaultMode ?? DEFAULT_MODE);
  }
  if (!volume.projected) return undefined;
  const mode = volume.projected.defaultMode ?? DEFAULT_MODE;
  const out: VolumeFile[] = [];
  for (const s of volume.projected.sources ?? []) {
    if (s.configMap) out.push(...await keyFiles(deps, pod, v, 'configmaps', s.configMap, mode));
    else if (s.secret) out.push(...await keyFiles(deps, pod, v, 'secrets', s.secret, mode));
    else if (s.downwardAPI) out.push(...downwardFiles(pod, v, s.downwardAPI.items ?? [], mode));
    else if (s.serviceAccountToken) {
      const t = await requestPodToken(deps, pod, { audience: s.serviceAccountToken.audience,
        expirationSeconds: s.serviceAccountToken.expirationSeconds });
      tokens?.(t);
      // The volume's defaultMode applies to the token as to every file (0644 by default).
      out.push({ path: safePath(s.serviceAccountToken.path, v), data: Buffer.from(t.token), mode });
    } else {
      throw kdpError('KDP_INVALID', `volume ${v}: projected source ${JSON.stringify(Object.keys(s))} is not supported`);
    }
  }
  return out;
}
