// The contract between the kubelet API's streaming endpoints (exec, attach, port-forward) and a
// runtime. The protocol side (src/streaming/: SPDY/3.1, WebSocket channel protocols) knows
// nothing of runtimes; the runtime knows nothing of protocols; the kubelet server joins them.

import type { Duplex } from 'node:stream';
import type { StreamProcess } from '../host/spawn.js';

/** Which of a process's streams the client asked for (kubelet query: input/output/error/tty). */
export interface StreamOptions {
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  /** With a TTY, stderr is merged into stdout (upstream: kubectl sets stderr=false). */
  readonly tty: boolean;
}

/** A process the client is connected to (defined at the kernel boundary, which starts them). */
export type { StreamProcess };

/** The streaming part of a runtime; a runtime without processes (virtual) leaves it out. */
export interface StreamingRuntime {
  /** Runs argv in the container's namespaces. KDP_NOT_FOUND: no such pod/container;
   *  KDP_BAD_REQUEST: container not running. No shell is involved unless argv[0] is one. */
  exec(uid: string, container: string, argv: readonly string[], opts: StreamOptions):
    Promise<StreamProcess>;
  /** Connects to the container's main process stdio (its spec needs stdin/tty for input). */
  attach(uid: string, container: string, opts: StreamOptions): Promise<StreamProcess>;
  /** A TCP connection to `port` on the pod's loopback (inside the pod's network namespace).
   *  KDP_BAD_REQUEST with the connect error when nothing listens. */
  portForward(uid: string, port: number): Promise<Duplex>;
}

/** Options of `/containerLogs` (kubelet query, as upstream's PodLogOptions). */
export interface ContainerLogOptions {
  readonly follow?: boolean;
  readonly previous?: boolean;
  readonly timestamps?: boolean;
  readonly tailLines?: number;
  readonly sinceSeconds?: number;
  readonly sinceTime?: string;
  readonly limitBytes?: number;
}
