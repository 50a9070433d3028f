// exec and port-forward into a netns pod: a command runs on the host's programs inside the
// pod's network namespace (nsenter with an argument array, never a shell unless the user's own
// argv is one); port-forward connects to the pod's loopback from inside its namespace. Where the
// runtime holds per-pod mount/UTS/IPC namespaces (pod-mounts.ts), exec enters those too
// (`nsenter --target HOLDER --net --mount --uts --ipc`): the pod's hostname, /etc and volumes.

import type { Duplex } from 'node:stream';
import { kdpError } from '../errors.js';
import type { NetnsSockets } from '../host/netns-socket.js';
import { childProcessStream } from '../streaming/fakes.js';
import { ptyProcess } from '../host/pty.js';
import type { Runtime } from './runtime.js';
import type { StreamingRuntime, StreamOptions, StreamProcess } from './streams.js';

export function netnsStreaming(runtime: Runtime & {
  ephemeralProcess?(uid: string, name: string): StreamProcess | undefined;
  podHolderPid?(uid: string): number | undefined;
  containerEnv?(uid: string, container: string): Record<string, string | undefined> | undefined;
  attachContainer?(uid: string, container: string, opts: StreamOptions): StreamProcess | undefined;
}, podNetns: (uid: string) => string, sockets: NetnsSockets): StreamingRuntime {
  const running = (uid: string, container: string) => {
    const st = runtime.podStatus(uid);
    if (!st) throw kdpError('KDP_NOT_FOUND', `pod with UID ${uid} not found`);
    const c = st.containers.find((x) => x.name === container);
    if (!c) throw kdpError('KDP_NOT_FOUND', `container ${container} not found`);
    if (c.state !== 'running') {
      throw kdpError('KDP_BAD_REQUEST', `container ${container} is not running (state: ${c.state})`);
    }
  };
  return {
    async exec(uid, container, argv, opts) {
      running(uid, container);
      if (argv.length === 0) throw kdpError('KDP_BAD_REQUEST', 'command is required');
      const holder = runtime.podHolderPid?.(uid);
      const full = ['nsenter', ...(holder ? [`--target=${holder}`, '--net', '--mount', '--uts', '--ipc', '--wd=/']
        : [`--net=/run/netns/${podNetns(uid)}`]), '--', ...argv];
      // The container's own env (as CRI exec), with a terminal type for -t.
      const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root',
        ...runtime.containerEnv?.(uid, container), ...(opts.tty ? { TERM: 'xterm' } : {}) };
      // kubectl exec -t sends its terminal's size first: the program starts at it (1 s at most).
      return opts.tty ? ptyProcess(full, opts.stdin, env, { awaitSizeMs: 1000 }) : childProcessStream(full, opts, env);
    },
    async attach(uid, container, opts) {
      const eph = runtime.ephemeralProcess?.(uid, container);
      if (eph) {
        // Detaching leaves the container running (as upstream's attach).
        return { stdin: eph.stdin, stdout: eph.stdout, stderr: eph.stderr, resize: (c, r) => eph.resize(c, r),
          exited: eph.exited.then(() => undefined), close: () => undefined };
      }
      running(uid, container);
      const session = runtime.attachContainer?.(uid, container, opts);
      if (session) return session;
      throw kdpError('KDP_BAD_REQUEST', `attach to ${container}: only containers with stdin or tty take ` +
        'attach sessions in kdp (use exec, or logs -f for the output)');
    },
    async portForward(uid, port): Promise<Duplex> {
      if (!runtime.podStatus(uid)) throw kdpError('KDP_NOT_FOUND', `pod with UID ${uid} not found`);
      return sockets.connect(podNetns(uid), '127.0.0.1', port);
    },
  };
}
