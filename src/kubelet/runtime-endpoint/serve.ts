// A node's runtime endpoint over its runtime: what a node agent starts beside its kubelet (kdp up's
// node set, `kdp node`). Virtual runtimes list their sandboxes but run no processes (exec answers
// so); netns runtimes exec through the same namespace entry as the kubelet API.

import { existsSync } from 'node:fs';
import { containerLogPath, nodeDirOf } from '../container-log-files.js';
import type { Runtime } from '../runtime.js';
import type { StreamingRuntime } from '../streams.js';
import { listenRuntimeEndpoint, runtimeEndpointPath } from './listen.js';
import { buildRuntimeEndpointServer } from './server.js';

export interface NodeRuntimeEndpointOptions {
  readonly dataDir: string;
  readonly nodeName: string;
  readonly runtime: Runtime;
  /** Processes in the pods (netns); absent: a virtual node. */
  readonly streaming?: StreamingRuntime;
}

/** Serves `<dataDir>/nodes/<node>/kdp-runtime.sock`; resolves to its close function. */
export async function serveNodeRuntimeEndpoint(o: NodeRuntimeEndpointOptions): Promise<() => Promise<void>> {
  const server = buildRuntimeEndpointServer({
    nodeName: o.nodeName,
    records: () => o.runtime.sandboxRecords?.() ?? [],
    logs: (uid, container, previous) => o.runtime.logs(uid, container, previous),
    logPath: (uid, pod, container, attempt) => {
      const path = containerLogPath(nodeDirOf(o.dataDir, o.nodeName), { ...pod, uid }, container, attempt);
      return existsSync(path) ? path : undefined;
    },
    ...(o.streaming ? { streaming: o.streaming } : {}),
  });
  return listenRuntimeEndpoint(server, runtimeEndpointPath(o.dataDir, o.nodeName));
}
