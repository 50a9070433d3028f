// Routes the API server's `pods/log` to the node agent running the pod (in-process clusters
// register every agent here and hand the router to the API server as its log provider).

import type { KubeObject } from '../client/types.js';
import { isKdpError, kdpError } from '../errors.js';
import type { NodeAgent } from './node-agent.js';

export interface LogOptionsLike {
  readonly tailLines?: number;
  readonly timestamps?: boolean;
  /** The container's previous run (`kubectl logs --previous`). */
  readonly previous?: boolean;
}

export interface NodeLogRouter {
  register(agent: NodeAgent): void;
  unregister(nodeName: string): void;
  logs(pod: KubeObject, container: string, opts: LogOptionsLike): Promise<string>;
}

export function buildNodeLogRouter(): NodeLogRouter {
  const agents = new Map<string, NodeAgent>();
  return {
    register: (a) => { agents.set(a.nodeName, a); },
    unregister: (n) => { agents.delete(n); },
    async logs(pod, container, opts) {
      const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
      const agent = nodeName ? agents.get(nodeName) : undefined;
      if (!agent) {
        throw kdpError('KDP_BAD_REQUEST', `container "${container}" in pod ` +
          `"${pod.metadata.name}" is waiting to start: ContainerCreating`);
      }
      let text: string;
      try {
        text = agent.logs(pod.metadata.namespace ?? '', pod.metadata.name!, container, opts.previous);
      } catch (e) {
        if (opts.previous && isKdpError(e, 'KDP_BAD_REQUEST')) {
          throw kdpError('KDP_BAD_REQUEST', `previous terminated container "${container}" in pod ` +
            `"${pod.metadata.name}" not found`);
        }
        throw kdpError('KDP_BAD_REQUEST', `container "${container}" in pod ` +
          `"${pod.metadata.name}" is waiting to start: ContainerCreating`);
      }
      if (opts.tailLines !== undefined) {
        const lines = text.split('\n').filter((l) => l !== '');
        const tail = lines.slice(Math.max(0, lines.length - opts.tailLines));
        text = tail.map((l) => `${l}\n`).join('');
      }
      return text;
    },
  };
}
