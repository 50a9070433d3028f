// The kubelet's `/containerLogs/{ns}/{pod}/{container}` as upstream's (server.go
// getContainerLogs, kubelet_pods.go GetKubeletContainerLogs + validateContainerLogStatus): the
// query decoded into PodLogOptions (400 `Unable to decode query.`, 422 `Invalid request.`), the
// container's status deciding which run is read (its errors are 400s with upstream's texts),
// then the run's CRI log file read with the options (container-log-read.ts).

import type { Pod } from '../../api/types.js';
import { kdpError } from '../../errors.js';
import { parseRfc3339 } from '../../util/rfc3339.js';
import { readContainerLog } from '../container-log-read.js';
import type { Runtime, RuntimeContainerStatus } from '../runtime.js';
import type { ContainerLogOptions } from '../streams.js';

/** The output of one request; throws KdpError (KDP_BAD_REQUEST: 400) before any output. */
export type ContainerLogSource = (pod: Pod, container: string, opts: ContainerLogOptions, signal: AbortSignal) =>
  AsyncIterable<Buffer>;

const BOOL = new Map([['1', true], ['t', true], ['T', true], ['TRUE', true], ['true', true], ['True', true],
  ['0', false], ['f', false], ['F', false], ['FALSE', false], ['false', false], ['False', false]]);

/** PodLogOptions from the kubelet's query (Go's strconv rules); KDP_BAD_REQUEST / KDP_INVALID
 *  with upstream's JSON-ish texts. */
export function parseContainerLogQuery(q: URLSearchParams): ContainerLogOptions {
  const undecodable = () => kdpError('KDP_BAD_REQUEST', '{"message": "Unable to decode query."}');
  const bool = (k: string) => {
    const v = q.get(k);
    if (v === null || v === '') return undefined;
    const b = BOOL.get(v);
    if (b === undefined) throw undecodable();
    return b;
  };
  const int = (k: string, v = q.get(k)) => {
    if (v === null || v === '') return undefined;
    if (!/^[+-]?\d+$/.test(v)) throw undecodable();
    return Number(v);
  };
  // `tail` is the old name of tailLines; `all` is the same as omitting it.
  const tail = q.get('tail');
  const tailLines = tail && tail !== 'all' ? int('tail', tail) : tail === 'all' ? undefined : int('tailLines');
  const sinceTime = q.get('sinceTime') || undefined;
  if (sinceTime !== undefined && parseRfc3339(sinceTime) === undefined) throw undecodable();
  const o: ContainerLogOptions = { follow: bool('follow'), previous: bool('previous'), timestamps: bool('timestamps'),
    tailLines, sinceSeconds: int('sinceSeconds'), sinceTime, limitBytes: int('limitBytes') };
  const invalid = (o.tailLines !== undefined && o.tailLines < 0) || (o.limitBytes !== undefined && o.limitBytes < 1)
    || (o.sinceSeconds !== undefined && o.sinceTime !== undefined)
    || (o.sinceSeconds !== undefined && o.sinceSeconds < 1);
  if (invalid) throw kdpError('KDP_INVALID', '{"message": "Invalid request."}');
  return o;
}

/** A container's state as validateContainerLogStatus reads it. */
interface LogStatus {
  readonly state: 'waiting' | 'running' | 'terminated' | 'unknown';
  readonly reason?: string;
  readonly containerID?: string;
  readonly lastTerminatedID?: string;
}

type ApiContainerStatus = {
  name: string; containerID?: string;
  state?: { waiting?: { reason?: string }; running?: object; terminated?: { containerID?: string } };
  lastState?: { terminated?: { containerID?: string } };
};

function fromRuntime(c: RuntimeContainerStatus): LogStatus {
  return { state: c.state === 'exited' ? 'terminated' : c.state, reason: c.reason, containerID: c.containerID,
    lastTerminatedID: c.lastTerminated ? (c.lastTerminated.containerID ?? 'previous') : undefined };
}

function fromApi(c: ApiContainerStatus): LogStatus {
  const s = c.state ?? {};
  return { state: s.running ? 'running' : s.terminated ? 'terminated' : s.waiting ? 'waiting' : 'unknown',
    reason: s.waiting?.reason, containerID: s.terminated ? s.terminated.containerID : c.containerID,
    lastTerminatedID: c.lastState?.terminated ? (c.lastState.terminated.containerID ?? '') : undefined };
}

/** upstream's validateContainerLogStatus: whether the current or the previous run is read. */
export function logRunOf(pod: Pod, name: string, status: LogStatus | undefined, previous: boolean): 'current' | 'previous' {
  const podName = pod.metadata.name;
  if (!status) throw kdpError('KDP_BAD_REQUEST', `container "${name}" in pod "${podName}" is not available`);
  const terminated = () => kdpError('KDP_BAD_REQUEST', `container "${name}" in pod "${podName}" is terminated`);
  if (previous) {
    if (!status.lastTerminatedID) {
      throw kdpError('KDP_BAD_REQUEST', `previous terminated container "${name}" in pod "${podName}" not found`);
    }
    return 'previous';
  }
  switch (status.state) {
    case 'running': return 'current';
    case 'terminated':
      if (status.containerID) return 'current';
      if (status.lastTerminatedID) return 'current';
      throw terminated();
    default:
      if (status.lastTerminatedID !== undefined) {
        if (!status.lastTerminatedID) throw terminated();
        return 'current';
      }
      if (status.state === 'waiting') {
        const why = status.reason === 'ErrImagePull' ? "image can't be pulled"
          : status.reason === 'ImagePullBackOff' ? 'trying and failing to pull image' : status.reason ?? '';
        throw kdpError('KDP_BAD_REQUEST', `container "${name}" in pod "${podName}" is waiting to start: ${why}`);
      }
      throw kdpError('KDP_BAD_REQUEST', `container "${name}" in pod "${podName}" is waiting to start - no logs yet`);
  }
}

/** The kubelet's log source over its runtime: status from the runtime while it holds the pod,
 *  else the pod's status as the API server has it (a finished pod's sandbox is gone). */
export function runtimeContainerLogs(runtime: Pick<Runtime, 'podStatus' | 'logStore' | 'ephemeralStatuses'>,
  now: () => number = Date.now): ContainerLogSource {
  const liveStatus = (uid: string, name: string) => {
    const rt = runtime.podStatus(uid);
    const all = [...(rt?.containers ?? []), ...(rt?.initContainers ?? []), ...(runtime.ephemeralStatuses?.(uid) ?? [])];
    return all.find((c) => c.name === name);
  };
  return (pod, container, opts, signal) => {
    const uid = pod.metadata.uid!;
    const live = liveStatus(uid, container);
    const st = pod.status as { containerStatuses?: ApiContainerStatus[]; initContainerStatuses?: ApiContainerStatus[];
      ephemeralContainerStatuses?: ApiContainerStatus[] } | undefined;
    const api = [...(st?.containerStatuses ?? []), ...(st?.initContainerStatuses ?? []),
      ...(st?.ephemeralContainerStatuses ?? [])].find((c) => c.name === container);
    const which = logRunOf(pod, container, live ? fromRuntime(live) : api ? fromApi(api) : undefined, !!opts.previous);
    const store = runtime.logStore;
    const runs = store?.runs(uid, container) ?? [];
    const run = runs[runs.length - (which === 'previous' ? 2 : 1)];
    if (!store || run === undefined) return (async function* () { /* no output kept */ })();
    const since = opts.sinceTime !== undefined ? parseRfc3339(opts.sinceTime)
      : opts.sinceSeconds !== undefined ? BigInt(now() - opts.sinceSeconds * 1000) * 1_000_000n : undefined;
    return readContainerLog(store, uid, container, run, {
      follow: opts.follow, timestamps: opts.timestamps, tailLines: opts.tailLines, since, limitBytes: opts.limitBytes,
    }, {
      signal,
      // Followed while this run is the container's running one.
      running: () => which === 'current' && liveStatus(uid, container)?.state === 'running'
        && store.runs(uid, container).at(-1) === run,
    });
  };
}
