// `POST /kdp/v1/nodes/{node}/logrecords`: where a node joined from another machine ships its
// log records (logging/node-log-agent.ts) into the cluster's log store — what a fluent-bit
// DaemonSet's output is to a logging backend, through the API server as every node agent's
// traffic is (its credentials, its TLS; never a path into the control plane's data dir).
// Allowed to the node itself (`system:node:{node}` in `system:nodes`, as NodeRestriction keeps
// a node to its own objects) and to whoever RBAC lets `create` this non-resource path (the
// admin); the rest 403, no credentials 401 (when anonymous access is off). The body is checked
// whole before any record is written (logging/log-ingest.ts). An API server that is not the
// store's writer (a replica of `kdp up --apiservers`) answers 503: the shipper retries, on a
// new connection, which the balancer may send to the writer.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { kdpError } from '../errors.js';
import { decodeShipment } from '../logging/log-ingest.js';
import type { LogRecord } from '../logging/record.js';
import { forbiddenError } from './authz/index.js';
import type { Authorizer, UserInfo } from './pipeline-types.js';
import { nodeIdentity } from './authz/node.js';

export const LOG_INGEST_PATH = '/kdp/v1/nodes/:node/logrecords';

/** Writes shipped records to the cluster's store. */
export type LogIngestSink = (records: readonly LogRecord[]) => void;

export function registerLogIngest(app: FastifyInstance, o: { authorizer: Authorizer;
  userOf: (req: FastifyRequest) => UserInfo; sink?: () => LogIngestSink | undefined }): void {
  app.post(LOG_INGEST_PATH, async (req, reply) => {
    const node = (req.params as { node: string }).node;
    const user = o.userOf(req);
    const self = node !== '' && nodeIdentity(user) === node;
    if (!self) {
      const attrs = { user, verb: 'create', resourceRequest: false, path: req.url.split('?')[0]! };
      const d = await o.authorizer.authorize(attrs);
      if (!d.allowed) throw forbiddenError(attrs, d);
    }
    const sink = o.sink?.();
    if (!sink) {
      throw kdpError('KDP_UNAVAILABLE', 'this API server does not write the cluster\'s log store (its collector does): retry');
    }
    const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    const records = decodeShipment(node, body);
    sink(records);
    return reply.code(200).header('content-type', 'application/json')
      .send(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200,
        message: `${records.length} records` }));
  });
}
