// Cluster-level logging for an in-process cluster (`kdp up`): the node-level agent and the
// backend in one. It tails every node's pod log directory (`<data-dir>/nodes/<node>/pods`,
// laid out as /var/log/pods) and takes the components' lines (their Events, the API server's
// requests, the agents' warnings), and writes all of it to the cluster's log store in
// `<data-dir>/logs`, which outlives pods, nodes and the cluster's run (`kdp logs` reads it).
// Components running as other processes (`kdp apiserver` replicas, `kdp node`, `kdp scheduler`,
// …) write their own files (component-spool.ts) and the local etcd members theirs
// (`<data-dir>/etcd/<member>.log`): tailed here like pods' files. The store has one writer:
// the collecting process names itself in `logs/collector.pid` (collectorPid).

import type { Server } from 'node:http';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Event } from '../api/types.js';
import type { InformerFactory } from '../client/informer.js';
import type { KubeObject } from '../client/types.js';
import { nodeDirOf } from '../kubelet/container-log-files.js';
import { agentLine, eventLine, logApiRequests, type ComponentLine } from './component-lines.js';
import { buildContainerTailer, type ComponentLogDir, type PodLogRoot } from './container-tailer.js';
import { componentLogDirs } from './component-spool.js';
import { pidAlive } from '../util/pid-alive.js';
import { writePrivateFileSync } from '../util/private-files.js';
import { openLogWriter, type LogWriter } from './log-writer.js';
import { rememberPodLabels } from './pod-labels.js';
import type { ComponentName, ComponentSource, LogRecord } from './record.js';

/** The cluster's log store directory. */
export function logStoreDir(dataDir: string): string {
  return join(dataDir, 'logs');
}

export interface LogCollectionOptions {
  readonly dataDir: string;
  readonly informers: InformerFactory;
  /** The API server's HTTP server: each finished request is one apiserver line. */
  readonly apiServer?: Server;
  /** The store's size bound (default 256 MiB). */
  readonly maxBytes?: number;
  readonly pollMs?: number;
  readonly onError?: (e: unknown) => void;
  readonly now?: () => number;
}

export interface LogCollection {
  /** Writes a line of a component. */
  line(l: ComponentLine): void;
  /** Records a node agent shipped through the API server (node-log-agent.ts, log-ingest.ts). */
  ingest(records: readonly LogRecord[]): void;
  /** `log` for kdp up's agents: their lines go to the store, and on to `next`. */
  tee(next: (line: string) => void): (line: string) => void;
  /** Reads every file to its end, writes everything and stops. */
  stop(): void;
}

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;

const pidFile = (dataDir: string) => join(logStoreDir(dataDir), 'collector.pid');

/** The pid of the live process collecting into the data dir's store, if any. */
export function collectorPid(dataDir: string): number | undefined {
  let pid: number;
  try { pid = Number(readFileSync(pidFile(dataDir), 'utf8').trim()); } catch { return undefined; }
  return Number.isInteger(pid) && pid > 0 && pidAlive(pid) ? pid : undefined;
}

export function startLogCollection(o: LogCollectionOptions): LogCollection {
  const now = o.now ?? Date.now;
  const started = now();
  const writer: LogWriter = openLogWriter({ dir: logStoreDir(o.dataDir), maxBytes: o.maxBytes,
    onError: o.onError });
  mkdirSync(logStoreDir(o.dataDir), { recursive: true, mode: 0o700 });
  writePrivateFileSync(pidFile(o.dataDir), `${process.pid}\n`);
  const sources = new Map<string, ComponentSource>();
  const line = (l: ComponentLine, time = now()) => {
    const key = `${l.component}/${l.node ?? ''}`;
    let source = sources.get(key);
    if (!source) {
      source = { kind: 'component', component: l.component as ComponentName,
        ...(l.node ? { node: l.node } : {}) };
      sources.set(key, source);
    }
    writer.append({ time, source, stream: 'stderr', message: l.message });
  };

  // Labels by pod UID, from the watch: a pod deleted before its directory is first seen keeps
  // its labels too.
  const podLabels = rememberPodLabels(o.informers.informerFor<KubeObject>(PODS));

  // Events as their components log them; an Event from before this run was logged then.
  const events = o.informers.informerFor<Event>(EVENTS);
  const seenAt = (ev: Event) => Date.parse(ev.lastTimestamp ?? ev.eventTime ?? ev.firstTimestamp ?? '') || 0;
  const offEvents = events.addEventHandler({
    onAdd: (ev) => { if (seenAt(ev) >= started - 1000) line(eventLine(ev)); },
    onUpdate: (old, ev) => { if ((ev.count ?? 1) > (old.count ?? 1)) line(eventLine(ev)); },
  });

  const tailer = buildContainerTailer({
    roots: () => nodeRoots(o.dataDir),
    components: () => componentDirs(o.dataDir),
    labelsOf: podLabels.labelsOf,
    sink: (r) => writer.append(r),
    positionsFile: join(logStoreDir(o.dataDir), 'tail-positions.json'),
    pollMs: o.pollMs, onError: o.onError,
  });
  tailer.start();

  const offRequests = o.apiServer
    ? logApiRequests(o.apiServer, (message) => line({ component: 'apiserver', message })) : () => {};

  let stopped = false;
  return {
    line: (l) => { if (!stopped) line(l); },
    ingest: (records) => { if (!stopped) for (const r of records) writer.append(r); },
    tee: (next) => (text) => {
      const l = agentLine(text);
      if (l && !stopped) line(l);
      next(text);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      offRequests();
      podLabels.stop();
      offEvents();
      tailer.stop();
      writer.close();
      if (collectorPid(o.dataDir) === process.pid) rmSync(pidFile(o.dataDir), { force: true });
    },
  };
}

/** Other processes' component files, and the local etcd members' logs. */
function componentDirs(dataDir: string): ComponentLogDir[] {
  return [...componentLogDirs(dataDir).map((c) => ({ ...c, format: 'cri' as const, reap: true })),
    { dir: join(dataDir, 'etcd'), source: { kind: 'component', component: 'etcd' }, format: 'zap' }];
}

/** Every node's pod log directory in the data dir (a stopped node's too: its files stay). */
function nodeRoots(dataDir: string): PodLogRoot[] {
  let nodes: string[];
  try { nodes = readdirSync(join(dataDir, 'nodes')); } catch { return []; }
  return nodes.map((node) => ({ node, dir: join(nodeDirOf(dataDir, node), 'pods') }));
}
