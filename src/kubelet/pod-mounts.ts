// A netns pod's own files: its mount, UTS and IPC namespaces are held by one process per pod
// (bin/kdp-podns.py, started in the pod's network namespace under `unshare --mount --uts --ipc
// --propagation private`, so nothing reaches the host's mounts). In them:
//   - hostname = the pod's (resolv-conf.ts podKernelHostname: spec.hostname/subdomain, FQDN with
//     setHostnameAsFQDN);
//   - /etc is an overlay: the host's /etc below, the pod's directory `<podDir>/etc` above, holding
//     the pod's resolv.conf, hosts and hostname (rendered as upstream's kubelet does); writes to
//     /etc inside the pod land there;
//   - /tmp is an overlay too (upper `<podDir>/tmp`, mode 1777): the pod writes its own /tmp, and
//     the host's files there stay readable (kdp's own programs may live under a /tmp data dir);
//   - each volumeMount of each container is bound at its mountPath (readOnly honoured): emptyDir
//     is `<podDir>/volumes/<name>`, configMap/secret/downwardAPI/projected their files written
//     there (projected.ts), hostPath the host's path. A mountPath whose directory is missing is
//     made inside an overlay of its top-level directory (the host's stays untouched); one under a
//     top-level directory the host lacks is refused with an error naming it.
// All containers of the pod share these namespaces (a simplification: upstream gives each
// container its own mount namespace with only its own volumeMounts).

import { chmodSync, existsSync, mkdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pod } from '../api/types.js';
import { kdpError } from '../errors.js';
import type { VolumeFile } from './projected.js';
import { writeAtomic } from './atomic-writer.js';
import { podKernelHostname, renderHosts, renderResolvConf, type KubeletDnsConfig } from './resolv-conf.js';

export const PODNS_SCRIPT = fileURLToPath(new URL('../../bin/kdp-podns.py', import.meta.url));

export interface PodMountDeps {
  /** The files of a configMap/secret/downwardAPI/projected volume; undefined for other kinds. */
  readonly volumeFiles?: (pod: Pod, volume: { name: string } & Record<string, unknown>) =>
    Promise<VolumeFile[] | undefined>;
  readonly dns: KubeletDnsConfig;
}

/** The holder's arguments (after the script path). `podDir` is made and filled here. */
export async function preparePodMounts(pod: Pod, podIPs: readonly string[], podDir: string,
  deps: PodMountDeps): Promise<string[]> {
  if (/[,:]/.test(podDir)) throw kdpError('KDP_CONFIG', `pod directory ${podDir} holds a comma or colon (overlayfs)`);
  const clusterDomain = deps.dns.clusterDomain || 'cluster.local';
  const etc = join(podDir, 'etc');
  const tmp = join(podDir, 'tmp');
  for (const d of [etc, join(podDir, 'etc-work'), tmp, join(podDir, 'tmp-work'), join(podDir, 'volumes')]) {
    mkdirSync(d, { recursive: true });
  }
  chmodSync(tmp, 0o1777);
  writeFileSync(join(etc, 'resolv.conf'), renderResolvConf(pod, deps.dns), { mode: 0o644 });
  writeFileSync(join(etc, 'hosts'), renderHosts(pod, podIPs, clusterDomain), { mode: 0o644 });
  const hostname = podKernelHostname(pod, clusterDomain);
  writeFileSync(join(etc, 'hostname'), `${hostname}\n`, { mode: 0o644 });

  const overlays = new Map<string, [string, string]>([['/etc', [etc, join(podDir, 'etc-work')]],
    ['/tmp', [tmp, join(podDir, 'tmp-work')]]]);
  const binds: string[] = [];
  const sources = new Map<string, string>();
  for (const v of pod.spec?.volumes ?? []) sources.set(v.name, await volumeDir(pod, v, podDir, deps));
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const m of c.volumeMounts ?? []) {
      const src0 = sources.get(m.name);
      if (!src0) throw kdpError('KDP_INVALID', `container ${c.name}: volumeMount ${m.name}: no volume of that name`);
      const src = m.subPath ? join(src0, safeSub(m.subPath, m.name)) : src0;
      if (m.subPath && !existsSync(src)) mkdirSync(src, { recursive: true });
      const target = hostTarget(m.mountPath, c.name);
      if (!existsSync(target)) {
        const top = `/${target.split('/')[1] ?? ''}`;
        if (top !== '/' && isDir(top)) {
          if (!overlays.has(top)) {
            const key = top.slice(1);
            const upper = join(podDir, 'overlay', key);
            const work = join(podDir, 'overlay', `${key}-work`);
            mkdirSync(upper, { recursive: true });
            mkdirSync(work, { recursive: true });
            overlays.set(top, [upper, work]);
          }
        } else {
          throw kdpError('KDP_INVALID', `container ${c.name}: volumeMount ${m.name}: mountPath ${m.mountPath}: ` +
            `kdp mounts volumes only under a top-level directory the host has (${top} does not exist)`);
        }
      }
      binds.push(m.readOnly ? '--ro-bind' : '--bind', src, target);
    }
  }
  const args = ['--hostname', hostname];
  // /tmp's overlay last: the upper directories of the others may live under /tmp (a data dir
  // there), and an overlay's upper directory cannot be on an overlay.
  const order = [...overlays.keys()].sort((a, b) => Number(a === '/tmp') - Number(b === '/tmp'));
  for (const d of order) args.push('--overlay', d, ...overlays.get(d)!);
  args.push(...binds);
  return args;
}

/** The pod's files go with the pod. */
export function removePodDir(podDir: string): void {
  rmSync(podDir, { recursive: true, force: true });
}

function isDir(p: string): boolean {
  try { return statSync(p).isDirectory(); } catch { return false; }
}

function safeSub(p: string, volume: string): string {
  if (p.startsWith('/') || p.split('/').some((s) => s === '..')) {
    throw kdpError('KDP_INVALID', `volumeMount ${volume}: subPath ${JSON.stringify(p)} must be relative, without ".."`);
  }
  return p;
}

/** The mountPath as the host resolves it: symlinks in its existing part followed (/var/run →
 *  /run), so a missing directory is made under the overlay that really covers it. */
function hostTarget(mountPath: string, container: string): string {
  if (!mountPath.startsWith('/')) {
    throw kdpError('KDP_INVALID', `container ${container}: mountPath ${JSON.stringify(mountPath)} must be absolute`);
  }
  const norm = posix.normalize(mountPath).replace(/\/+$/, '') || '/';
  let existing = norm;
  const rest: string[] = [];
  while (existing !== '/' && !existsSync(existing)) {
    rest.unshift(posix.basename(existing));
    existing = dirname(existing);
  }
  return posix.join(realpathSync(existing), ...rest);
}

/** Where a volume's content lives on the node (made and filled now). */
async function volumeDir(pod: Pod, v: { name: string } & Record<string, unknown>, podDir: string,
  deps: PodMountDeps): Promise<string> {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(v.name)) {
    throw kdpError('KDP_INVALID', `volume name ${JSON.stringify(v.name)} is not a DNS label`);
  }
  const hostPath = v.hostPath as { path?: string } | undefined;
  if (hostPath?.path) {
    if (!existsSync(hostPath.path)) {
      throw kdpError('KDP_INVALID', `volume ${v.name}: hostPath ${hostPath.path} does not exist on the node`);
    }
    return hostPath.path;
  }
  const dir = join(podDir, 'volumes', v.name);
  mkdirSync(dir, { recursive: true });
  if (v.emptyDir !== undefined) {
    chmodSync(dir, 0o777);
    return dir;
  }
  const files = await deps.volumeFiles?.(pod, v);
  if (!files) {
    throw kdpError('KDP_INVALID', `volume ${v.name}: kind ${Object.keys(v).filter((k) => k !== 'name').join(',')} ` +
      'is not supported in netns mode (emptyDir, configMap, secret, downwardAPI, projected, hostPath are)');
  }
  writeAtomic(dir, files);
  return dir;
}

/** The volume kinds whose files the kubelet writes (and keeps current): configMap, secret,
 *  downwardAPI and projected. */
const WRITTEN = ['configMap', 'secret', 'downwardAPI', 'projected'];

/**
 * Brings a running pod's configMap, secret, downwardAPI and projected volumes up to date, as the
 * kubelet's periodic volume sync does (a ConfigMap edit reaches the pod's files; a projected
 * token is renewed): each volume rewritten atomically when its content changed. A volume whose
 * source cannot be read now keeps its last content. Returns the names of the volumes rewritten.
 */
export async function refreshPodVolumes(pod: Pod, podDir: string, deps: Pick<PodMountDeps, 'volumeFiles'>): Promise<string[]> {
  const changed: string[] = [];
  for (const v of (pod.spec?.volumes ?? []) as Array<{ name: string } & Record<string, unknown>>) {
    if (!WRITTEN.some((k) => v[k] !== undefined)) continue;
    const dir = join(podDir, 'volumes', v.name);
    if (!existsSync(dir)) continue;
    const files = await deps.volumeFiles?.(pod, v).catch(() => undefined);
    if (files && writeAtomic(dir, files)) changed.push(v.name);
  }
  return changed;
}
