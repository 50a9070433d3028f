// Ephemeral containers (`kubectl debug POD --image=busybox -it`) in a netns pod: each runs once,
// never restarted, as a process in the pod's network namespace — on a terminal when it asks for
// one (`tty`), with its stdin held for `kubectl attach` — and is reported in
// `ephemeralContainerStatuses`. A decorator over the netns runtime: the pod's own containers are
// untouched.

import type { Pod } from '../api/types.js';
import { ptyProcess } from '../host/pty.js';
import { childProcessStream } from '../streaming/fakes.js';
import type { Runtime, RuntimeContainerStatus, RuntimePodStatus } from './runtime.js';
import type { StreamProcess } from './streams.js';

export interface EphemeralSpec {
  readonly name: string;
  readonly image?: string;
  readonly command?: string[];
  readonly args?: string[];
  readonly tty?: boolean;
  readonly stdin?: boolean;
}

export interface EphemeralRuntime extends Runtime {
  /** Starts the pod's ephemeral containers not yet started (idempotent). */
  runEphemeral(pod: Pod): Promise<void>;
  /** The running ephemeral container's process, for attach. */
  ephemeralProcess(uid: string, name: string): StreamProcess | undefined;
  ephemeralStatuses(uid: string): RuntimeContainerStatus[];
}

/** The debugging image's entrypoint when the spec gives none: a shell (the host's). */
function argvOf(c: EphemeralSpec): string[] {
  const cmd = [...(c.command ?? []), ...(c.args ?? [])];
  return cmd.length ? cmd : ['sh'];
}

export function withEphemeral(base: Runtime, podNetns: (uid: string) => string): EphemeralRuntime {
  let listener: (uid: string) => void = () => {};
  const pods = new Map<string, Map<string, { proc?: StreamProcess; status: RuntimeContainerStatus }>>();
  const iso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const statuses = (uid: string) => [...(pods.get(uid)?.values() ?? [])].map((e) => e.status);
  return {
    ...base,
    runPod: (pod, net) => base.runPod(pod, net),
    podStatus: (uid) => base.podStatus(uid),
    listPods: () => base.listPods(),
    logs: (uid, c, previous) => base.logs(uid, c, previous),
    onChange: (l) => { listener = l; base.onChange(l); },
    close: () => base.close(),
    killPod: async (uid) => {
      for (const e of pods.get(uid)?.values() ?? []) e.proc?.close();
      pods.delete(uid);
      await base.killPod(uid);
    },
    ...(base.stopPod ? { stopPod: (uid: string, g: number) => {
      for (const e of pods.get(uid)?.values() ?? []) e.proc?.close();
      return base.stopPod!(uid, g);
    } } : {}),
    async runEphemeral(pod) {
      const uid = pod.metadata.uid!;
      const specs = (pod.spec as { ephemeralContainers?: EphemeralSpec[] }).ephemeralContainers ?? [];
      if (!specs.length || !base.podStatus(uid)) return;
      let mine = pods.get(uid);
      if (!mine) pods.set(uid, (mine = new Map()));
      for (const c of specs) {
        if (mine.has(c.name)) continue;
        const entry: { proc?: StreamProcess; status: RuntimeContainerStatus } = { status: {
          name: c.name, state: 'waiting', reason: 'ContainerCreating', ready: false, restartCount: 0 } };
        mine.set(c.name, entry);
        // The pod's mount/UTS/IPC namespaces too, where the runtime holds them (pod-mounts.ts).
        const holder = (base as { podHolderPid?(uid: string): number | undefined }).podHolderPid?.(uid);
        const argv = ['nsenter', ...(holder ? [`--target=${holder}`, '--net', '--mount', '--uts', '--ipc', '--wd=/']
          : [`--net=/run/netns/${podNetns(uid)}`]), '--', ...argvOf(c)];
        const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', TERM: 'xterm' };
        const opts = { stdin: !!c.stdin, stdout: true, stderr: true, tty: !!c.tty };
        try {
          const proc = c.tty ? await ptyProcess(argv, !!c.stdin, env) : await childProcessStream(argv, opts, env);
          entry.proc = proc;
          const startedAt = iso();
          entry.status = { name: c.name, state: 'running', startedAt, ready: false, restartCount: 0,
            containerID: `kdp://${uid.slice(0, 8)}-${c.name}`, imageID: c.image ?? '' };
          // Nobody attached yet: keep the output flowing so the process never blocks on it.
          if (!c.tty && !c.stdin) { proc.stdout?.resume(); proc.stderr?.resume(); }
          void proc.exited.then((code) => {
            entry.status = { ...entry.status, state: 'exited', exitCode: code ?? 0, finishedAt: iso(),
              reason: code === 0 ? 'Completed' : 'Error' };
            listener(uid);
          });
        } catch (e) {
          entry.status = { ...entry.status, state: 'waiting', reason: 'RunContainerError', message: (e as Error).message };
        }
        listener(uid);
      }
    },
    ephemeralProcess: (uid, name) => {
      const e = pods.get(uid)?.get(name);
      return e?.status.state === 'running' ? e.proc : undefined;
    },
    ephemeralStatuses: statuses,
  };
}

/** The pod status's ephemeralContainerStatuses from the runtime's. */
export function ephemeralContainerStatuses(pod: Pod, list: readonly RuntimeContainerStatus[]) {
  const images = new Map(((pod.spec as { ephemeralContainers?: EphemeralSpec[] }).ephemeralContainers ?? [])
    .map((c) => [c.name, c.image ?? '']));
  return list.map((c) => ({
    name: c.name, ready: false, restartCount: 0, image: images.get(c.name) ?? '', imageID: c.imageID ?? '',
    ...(c.containerID ? { containerID: c.containerID } : {}),
    state: c.state === 'running' ? { running: { startedAt: c.startedAt } }
      : c.state === 'exited' ? { terminated: { exitCode: c.exitCode ?? 0, reason: c.reason ?? 'Completed',
        startedAt: c.startedAt, finishedAt: c.finishedAt, containerID: c.containerID } }
        : { waiting: { reason: c.reason ?? 'ContainerCreating', ...(c.message ? { message: c.message } : {}) } },
  }));
}

export type { RuntimePodStatus };
