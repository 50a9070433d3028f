// The extra API servers of `kdp up --apiservers N`: each a `kdp apiserver --supervised` process
// on the same data directory (one CA, serving certificate, token file and service-account key,
// so a token or certificate valid on one is valid on all) and the same etcd cluster (one
// history: a write through one is seen by watches on every other), as kubeadm's HA control
// plane runs one kube-apiserver per control-plane node. A replica exits when its stdin closes,
// so one never outlives `kdp up`, even after a SIGKILL.

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kdpError } from '../errors.js';
import { hostSpawner, type HostChild, type Spawner } from '../host/spawn.js';

export const KDP_BIN = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));

export interface ReplicaOptions {
  readonly dataDir: string;
  readonly etcdEndpoints: readonly string[];
  readonly serviceCIDR: string;
  /** Admission plugins beyond the defaults (kdp up: ServiceAccount, and NetnsAnnotation in netns mode). */
  readonly admissionPlugins: readonly string[];
  /** netns mode: dial pods and kubelets inside the data dir's cluster namespaces. */
  readonly netns: boolean;
  readonly log: (line: string) => void;
  readonly spawner?: Spawner;
}

export interface Replica {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** SIGTERM (the API server closes) and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  exited(): boolean;
}

/** Starts replica `name`; resolves once it listens (its first stdout line names the URL). */
export function startReplica(name: string, o: ReplicaOptions): Promise<Replica> {
  const pki = join(o.dataDir, 'pki');
  const args = [KDP_BIN, 'apiserver', '--supervised', '--data-dir', o.dataDir, '--port', '0',
    '--service-cluster-ip-range', o.serviceCIDR,
    '--etcd-servers', o.etcdEndpoints.join(','), '--etcd-cafile', join(pki, 'etcd', 'ca.crt'),
    '--etcd-certfile', join(pki, 'apiserver-etcd-client.crt'), '--etcd-keyfile', join(pki, 'apiserver-etcd-client.key'),
    ...(o.admissionPlugins.length ? ['--enable-admission-plugins', o.admissionPlugins.join(',')] : []),
    ...(o.netns ? ['--netns-cluster'] : [])];
  const child: HostChild = (o.spawner ?? hostSpawner).spawn(process.execPath, args);
  let exitedFlag = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => { exitedFlag = true; resolve(); }));
  child.stderr!.setEncoding('utf8');
  let stderr = '';
  child.stderr!.on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
    for (const line of d.split('\n').filter(Boolean)) o.log(`${name}: ${line}`);
  });
  return new Promise<Replica>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString('utf8');
      const m = /listening on (https:\/\/[^\s]+)/.exec(out);
      if (!m) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      const url = m[1]!;
      resolve({
        name, url, port: Number(new URL(url).port), pid: child.pid!,
        exited: () => exitedFlag,
        async stop(signal = 'SIGTERM') {
          if (exitedFlag) return;
          child.kill(signal);
          const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exit;
          clearTimeout(t);
        },
      });
    };
    child.stdout!.on('data', onData);
    void exit.then(() => reject(kdpError('KDP_UNAVAILABLE',
      `API server ${name} exited before listening: ${stderr.trim().split('\n').slice(-3).join(' | ') || 'no output'}`)));
  });
}
