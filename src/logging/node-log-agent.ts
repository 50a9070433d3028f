// The logging agent of a node joined from another machine (`kdp node join`, or `kdp node` on a
// data dir of its own): there no collector (collector.ts) reads the node's files, so the node
// keeps its own journal and ships it, as a fluent-bit DaemonSet pod with a storage cursor does.
//  - It tails the node's CRI log files (`<data-dir>/nodes/<node>/pods/…`) and its components'
//    spool files (`<data-dir>/component-logs/{kubelet,kube-proxy}.<node>/`, what `kdp node join`
//    prints: component-journal.ts) into the node's own store `<data-dir>/nodes/<node>/logs`
//    (bounded, 64 MiB by default), tagging containers with their pods' labels from a watch of
//    the node's pods that remembers deleted ones (pod-labels.ts). The kubelet serves this store
//    as its `/logs/?query=` (node-log-query.ts) and `kdp logs --data-dir` reads it on the node.
//  - A shipper (log-shipper.ts) sends every record, cursor saved per acknowledged batch, to the
//    API server (`POST /kdp/v1/nodes/<node>/logrecords`), which writes it to the cluster's store:
//    `kdp logs` and the UI's search on the control plane see the node's lines, a deleted pod's
//    included, and keep them after the node is gone.

import { join } from 'node:path';
import type { Informer } from '../client/informer.js';
import type { KubeObject } from '../client/types.js';
import { nodeDirOf } from '../kubelet/container-log-files.js';
import { componentLogDirs } from './component-spool.js';
import { buildContainerTailer } from './container-tailer.js';
import { buildLogShipper } from './log-shipper.js';
import { openLogWriter } from './log-writer.js';
import { rememberPodLabels } from './pod-labels.js';
import type { LogRecord } from './record.js';

export const NODE_STORE_BYTES = 64 * 1024 * 1024;

/** The store of a node's own journal in its data dir. */
export function nodeLogStoreDir(dataDir: string, node: string): string {
  return join(nodeDirOf(dataDir, node), 'logs');
}

export interface NodeLogAgentOptions {
  readonly dataDir: string;
  readonly node: string;
  /** The node's pods (their labels tag their lines); started by the caller. */
  readonly pods: Informer<KubeObject>;
  /** Sends a batch to the cluster's store; absent: the journal is kept here only. */
  readonly ship?: (records: readonly LogRecord[]) => Promise<void>;
  readonly maxBytes?: number;
  readonly pollMs?: number;
  readonly shipIntervalMs?: number;
  readonly onError?: (e: unknown) => void;
}

export interface NodeLogAgent {
  readonly storeDir: string;
  /** Reads every file to its end, writes and ships what it can, and stops. */
  stop(): Promise<void>;
}

export function startNodeLogAgent(o: NodeLogAgentOptions): NodeLogAgent {
  const storeDir = nodeLogStoreDir(o.dataDir, o.node);
  const writer = openLogWriter({ dir: storeDir, maxBytes: o.maxBytes ?? NODE_STORE_BYTES, onError: o.onError });
  const labels = rememberPodLabels(o.pods);
  const tailer = buildContainerTailer({
    roots: () => [{ node: o.node, dir: join(nodeDirOf(o.dataDir, o.node), 'pods') }],
    components: () => componentLogDirs(o.dataDir).filter((c) => c.source.node === o.node)
      .map((c) => ({ ...c, format: 'cri' as const, reap: true })),
    labelsOf: labels.labelsOf,
    sink: (r) => writer.append(r),
    positionsFile: join(storeDir, 'tail-positions.json'),
    pollMs: o.pollMs, onError: o.onError,
  });
  tailer.start();
  const shipper = o.ship ? buildLogShipper({ storeDir, cursorFile: join(storeDir, 'ship-cursor.json'), ship: o.ship,
    intervalMs: o.shipIntervalMs, onError: o.onError }) : undefined;
  shipper?.start();
  let stopping: Promise<void> | undefined;
  return {
    storeDir,
    stop() {
      stopping ??= (async () => {
        labels.stop();
        tailer.stop();
        writer.close();
        await shipper?.stop();
      })();
      return stopping;
    },
  };
}
