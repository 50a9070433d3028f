// Cluster-level logging for a node process (`kdp node join`, `kdp node`): beside a collector in
// the same data dir (`kdp up`, or `kdp apiserver` alone) there is nothing to do — it tails the
// node's files and the kubelet's `/logs/` reads the cluster's store. On a data dir of its own (a
// node joined from another machine) the node keeps its own journal and ships it to the cluster's
// store through the API server, with the credentials of its kubeconfig (logging/node-log-agent.ts).

import { buildInformer } from '../client/informer.js';
import { buildTransport, type Transport } from '../client/http-transport.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import type { Client, KubeObject } from '../client/types.js';
import { collectorPid } from '../logging/collector.js';
import { encodeShipment } from '../logging/log-ingest.js';
import { startNodeLogAgent } from '../logging/node-log-agent.js';
import type { LogRecord } from '../logging/record.js';

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;

export interface NodeLogging {
  /** The node's own store (its kubelet's `/logs/` reads it). */
  readonly storeDir: string;
  stop(): Promise<void>;
}

export interface NodeLoggingOptions {
  readonly dataDir: string;
  readonly node: string;
  /** Whose credentials ship the records (the node's kubelet.conf for `kdp node join`). */
  readonly kubeconfig: string;
  /** Watches the node's pods for their labels (the kubelet's client). */
  readonly client: Client;
  /** A `kdp up` runs in the data dir. */
  readonly clusterHere: boolean;
  readonly log: (line: string) => void;
}

/** Undefined when a collector in the data dir keeps the node's logs. */
export function startNodeLogging(o: NodeLoggingOptions): NodeLogging | undefined {
  if (o.clusterHere || collectorPid(o.dataDir) !== undefined) return undefined;
  const pods = buildInformer<KubeObject>(o.client, PODS, { fieldSelector: `spec.nodeName=${o.node}` });
  const connect = () => buildTransport(loadKubeconfig(o.kubeconfig));
  let transport: Transport = connect();
  // A failed batch is retried on a new connection (behind `kdp up --apiservers`' balancer, one
  // that may reach the API server writing the store).
  const reconnect = () => { transport.close(); transport = connect(); };
  const path = `/kdp/v1/nodes/${encodeURIComponent(o.node)}/logrecords`;
  const ship = async (records: readonly LogRecord[]) => {
    const r = await transport.call('POST', path, { contentType: 'application/json', data: encodeShipment(o.node, records) })
      .catch((e: unknown) => { reconnect(); throw e; });
    if (r.status !== 200) {
      reconnect();
      let why = r.text;
      try { why = (JSON.parse(r.text) as { message?: string }).message ?? r.text; } catch { /* text as sent */ }
      throw new Error(`the API server refused the node's log records (${r.status}): ${why}`);
    }
  };
  const agent = startNodeLogAgent({ dataDir: o.dataDir, node: o.node, pods, ship,
    onError: (e) => o.log(`logs: ${(e as Error).message}`) });
  pods.start();
  return {
    storeDir: agent.storeDir,
    async stop() {
      await agent.stop();
      pods.stop();
      transport.close();
    },
  };
}
