// The wire form of a node agent's shipment to the cluster's log store (node-log-agent.ts ships,
// the API server's `POST /kdp/v1/nodes/{node}/logrecords` takes it, apiserver/log-ingest-route.ts):
// `{"kind":"LogShipment","node":N,"records":[{time,source,stream,message},…]}`, time in epoch
// milliseconds with the fraction kept. Decoding checks every record field by field — each one
// the named node's (its kubelet's and kube-proxy's lines, its pods' containers) — and refuses
// the whole shipment at the first bad one, naming it: nothing is half-written.

import { kdpError } from '../errors.js';
import { NODE_SERVICES } from './node-log-query.js';
import type { LogRecord, LogSource } from './record.js';

export const SHIPMENT_KIND = 'LogShipment';

export function encodeShipment(node: string, records: readonly LogRecord[]): string {
  return JSON.stringify({ kind: SHIPMENT_KIND, node, records });
}

const isStr = (v: unknown): v is string => typeof v === 'string';

/** The records of a shipment from `node`; throws KDP_BAD_REQUEST naming the field at fault. */
export function decodeShipment(node: string, text: string): LogRecord[] {
  const bad = (field: string, why: string): never => {
    throw kdpError('KDP_BAD_REQUEST', `${field}: ${why}`);
  };
  let doc: unknown;
  try { doc = JSON.parse(text); } catch (e) { return bad('body', `not JSON: ${(e as Error).message}`); }
  const d = doc as { kind?: unknown; node?: unknown; records?: unknown };
  if (typeof doc !== 'object' || doc === null) bad('body', 'must be an object');
  if (d.kind !== SHIPMENT_KIND) bad('kind', `must be ${JSON.stringify(SHIPMENT_KIND)}`);
  if (d.node !== node) bad('node', `must be the node of the path (${JSON.stringify(node)})`);
  if (!Array.isArray(d.records)) return bad('records', 'must be a list');
  return d.records.map((raw, i) => {
    const at = `records[${i}]`;
    const r = raw as Partial<Record<keyof LogRecord, unknown>>;
    if (typeof raw !== 'object' || raw === null) bad(at, 'must be an object');
    if (typeof r.time !== 'number' || !Number.isFinite(r.time) || r.time < 0) bad(`${at}.time`, 'must be epoch milliseconds');
    if (r.stream !== 'stdout' && r.stream !== 'stderr') bad(`${at}.stream`, 'must be stdout or stderr');
    if (!isStr(r.message) || r.message.includes('\n')) bad(`${at}.message`, 'must be one line of text');
    return { time: r.time as number, stream: r.stream as LogRecord['stream'], message: r.message as string,
      source: decodeSource(`${at}.source`, r.source, node, bad) };
  });
}

function decodeSource(at: string, raw: unknown, node: string, bad: (f: string, why: string) => never): LogSource {
  const s = raw as Record<string, unknown>;
  if (typeof raw !== 'object' || raw === null) bad(at, 'must be an object');
  if (s.node !== node) bad(`${at}.node`, `must be ${JSON.stringify(node)}: a node ships only its own lines`);
  if (s.kind === 'component') {
    if (!(NODE_SERVICES as readonly unknown[]).includes(s.component)) {
      bad(`${at}.component`, `must be one of the node's: ${NODE_SERVICES.join(', ')}`);
    }
    return { kind: 'component', component: s.component as 'kubelet', node };
  }
  if (s.kind !== 'container') return bad(`${at}.kind`, 'must be container or component');
  for (const f of ['namespace', 'pod', 'uid', 'container'] as const) {
    if (!isStr(s[f]) || s[f] === '') bad(`${at}.${f}`, 'must be a non-empty string');
  }
  const labels = s.labels ?? {};
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)
    || !Object.values(labels).every(isStr)) bad(`${at}.labels`, 'must map strings to strings');
  return { kind: 'container', namespace: s.namespace as string, pod: s.pod as string, uid: s.uid as string,
    container: s.container as string, node, labels: { ...(labels as Record<string, string>) } };
}
