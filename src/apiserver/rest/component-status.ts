// GET /api/v1/componentstatuses[/NAME] (`kubectl get cs`), as upstream's deprecated endpoint
// (pkg/registry/core/componentstatus): not stored; each call probes the components — the
// scheduler and the controller manager on their secure ports' /healthz (10259, 10257 on
// 127.0.0.1, certificate not verified, as upstream's prober) and each etcd server's /health —
// unless the server was given the statuses (kdp up, whose components run in its own process).
// A probe that fails is `Healthy False` with the error text; a healthy one `True` with "ok"
// (etcd: its /health body).

import { request as httpsRequest } from 'node:https';
import type { KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import type { Printer } from '../table/types.js';
import { col, NAME_COL } from '../table/types.js';

export interface ComponentHealth {
  readonly name: string;
  readonly healthy: boolean;
  /** "ok", or etcd's `{"health":"true","reason":""}`. */
  readonly message?: string;
  /** Why the probe failed. */
  readonly error?: string;
}

export type ComponentStatusSource = () => Promise<readonly ComponentHealth[]>;

export function toComponentStatus(h: ComponentHealth): KubeObject {
  return {
    kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name: h.name },
    conditions: [{ type: 'Healthy', status: h.healthy ? 'True' : 'False',
      ...(h.message ? { message: h.message } : {}), ...(h.error ? { error: h.error } : {}) }],
  } as KubeObject;
}

/** Upstream's probe of an HTTPS /healthz: 200 with body `ok` is healthy. */
export function probeHealthz(name: string, url: string, timeoutMs = 2000): Promise<ComponentHealth> {
  return new Promise((resolve) => {
    const req = httpsRequest(url, { rejectUnauthorized: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve(res.statusCode === 200
        ? { name, healthy: true, message: body.trim() || 'ok' }
        : { name, healthy: false, error: `unhealthy: HTTP ${res.statusCode}: ${body.trim()}` }));
    });
    req.on('timeout', () => req.destroy(new Error(`Get "${url}": context deadline exceeded`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      const where = new URL(url).host;
      const why = e.code === 'ECONNREFUSED' ? `dial tcp ${where}: connect: connection refused` : e.message;
      resolve({ name, healthy: false, error: `Get "${url}": ${why}` });
    });
    req.end();
  });
}

/** The probes of a bare API server: the components on their default secure ports. */
export function defaultComponentProbes(): ComponentStatusSource {
  return async () => Promise.all([
    probeHealthz('scheduler', 'https://127.0.0.1:10259/healthz'),
    probeHealthz('controller-manager', 'https://127.0.0.1:10257/healthz'),
  ]);
}

export async function listComponentStatuses(source: ComponentStatusSource) {
  const items = (await source()).map(toComponentStatus);
  return { kind: 'ComponentStatusList', apiVersion: 'v1', metadata: {}, items };
}

export async function getComponentStatus(source: ComponentStatusSource, name: string): Promise<KubeObject> {
  const h = (await source()).find((x) => x.name === name);
  if (!h) {
    throw kdpError('KDP_NOT_FOUND', `componentstatuses ${JSON.stringify(name)} not found`,
      { name, kind: 'componentstatuses' });
  }
  return toComponentStatus(h);
}

/** kubectl's columns: NAME STATUS MESSAGE ERROR (STATUS Healthy/Unhealthy). */
export const componentStatusPrinter: Printer = {
  columns: [NAME_COL, col('Status', 0, 'Status of the component conditions'),
    col('Message', 0, 'Message of the component conditions'),
    col('Error', 0, 'Error of the component conditions')],
  row: (o) => {
    const c = ((o as { conditions?: Array<Record<string, string>> }).conditions ?? [])
      .find((x) => x.type === 'Healthy') ?? {};
    return [o.metadata.name ?? '', c.status === 'True' ? 'Healthy' : 'Unhealthy', c.message ?? '', c.error ?? ''];
  },
};

export function isComponentStatuses(r: { group: string; resource: string }): boolean {
  return r.group === '' && r.resource === 'componentstatuses';
}
