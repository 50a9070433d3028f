// A pod's own files (with `podsDir`): the process holding its mount, UTS and IPC namespaces
// (pod-mounts.ts: hostname, resolv.conf, hosts, /etc and /tmp overlays, volumes), which
// containers and exec join with `nsenter --target`, and the kubelet's periodic volume sync.

import { existsSync } from 'node:fs';
import { kdpError } from '../../errors.js';
import type { Workload } from '../../host/launcher.js';
import { recordProcess } from '../../host/process.js';
import { preparePodMounts, refreshPodVolumes, removePodDir, PODNS_SCRIPT } from '../pod-mounts.js';
import type { NetnsPods, Sandbox } from './pods.js';

/** Starts the pod's namespace holder in `podDir`; resolves once it is ready. */
export async function startHolder(ctx: NetnsPods, sb: Sandbox, podDir: string): Promise<void> {
  const { o } = ctx;
  sb.podDir = podDir;
  const dns = o.dns ? await o.dns() : { clusterDNS: [], clusterDomain: 'cluster.local' };
  const args = await preparePodMounts(sb.pod, sb.podIPs, podDir, { dns, volumeFiles: o.volumeFiles });
  const python = o.python ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
  const holder = ctx.launcher.launch({
    file: 'nsenter',
    args: [`--net=/run/netns/${sb.netns}`, '--', 'unshare', '--mount', '--uts', '--ipc',
      '--propagation', 'private', '--', python, PODNS_SCRIPT, ...args],
    env: { PATH: process.env.PATH },
  });
  holder.once('spawn', (pid: number) => { void o.state.addProcess(recordProcess(pid)); });
  await holderReady(sb, holder);
  holder.on('exit', () => { if (holder.pid) o.state.removeProcess(holder.pid); });
  sb.holder = holder;
}

/** Resolves when the holder prints `ready`; rejects with its output when it exits first. */
function holderReady(sb: Sandbox, holder: Workload): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (d: string) => {
      out += d;
      if (/^ready$/m.test(out)) { holder.off('data', onData); resolve(); }
    };
    holder.on('data', onData);
    holder.once('exit', (code) => reject(kdpError('KDP_HOST_EXEC',
      `pod ${sb.pod.metadata.namespace ?? 'default'}/${sb.pod.metadata.name}: its namespaces could not be set ` +
      `up (exit ${code}): ${out.trim().slice(0, 500)}`)));
  });
}

/** Kills the holder (its namespaces go with it) and removes the pod's files. */
export async function stopHolder(sb: Sandbox): Promise<void> {
  const h = sb.holder;
  if (h && h.exitCode === null && h.signalCode === null) {
    await new Promise<void>((resolve) => { h.once('exit', () => resolve()); h.kill('SIGKILL'); });
  }
  if (sb.podDir) removePodDir(sb.podDir);
}

/** The kubelet's periodic volume sync (upstream syncFrequency, 1 min, scaled): ConfigMap and
 *  Secret edits and renewed service-account tokens reach running pods' files. One pass at a
 *  time; undefined without volume sources. */
export function startVolumeSync(ctx: NetnsPods): NodeJS.Timeout | undefined {
  const volumeFiles = ctx.o.volumeFiles;
  if (!volumeFiles) return undefined;
  let syncing = false;
  const timer = setInterval(() => {
    if (syncing) return;
    syncing = true;
    void (async () => {
      for (const sb of [...ctx.sandboxes.values()]) {
        if (sb.podDir) await refreshPodVolumes(sb.pod, sb.podDir, { volumeFiles }).catch(() => undefined);
      }
    })().finally(() => { syncing = false; });
  }, 60_000 * ctx.scale);
  timer.unref();
  return timer;
}
