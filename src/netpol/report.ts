// `kdp verify --netpol`: the reachability truth tables for a set of objects, one per
// (port, protocol), as upstream's e2e prints them. Pure: objects in, text or JSON out.

import type { KubeObject } from '../client/types.js';
import { reachabilityMatrix } from './matrix.js';
import type { NetpolModel } from './model.js';
import { modelFromObjects } from './objects.js';
import type { NetpolProtocol } from './types.js';

export interface PortTarget {
  readonly port: number;
  readonly protocol: NetpolProtocol;
}

export interface NetpolTable {
  readonly port: number;
  readonly protocol: NetpolProtocol;
  readonly classes: number;
  readonly evaluations: number;
  /** Rows (from) then columns (to), as `ns/pod`; values[from][to], true = allowed. */
  readonly pods: readonly string[];
  readonly values: readonly (readonly boolean[])[];
  /** Upstream PrettyPrint text. */
  readonly text: string;
}

const MAX_DEFAULT_TARGETS = 16;

/** Every (port, protocol) some pod declares as a container port; 80/TCP when none. */
export function defaultTargets(m: NetpolModel): PortTarget[] {
  const seen = new Map<string, PortTarget>();
  for (const p of m.pods) {
    for (const x of p.ports) seen.set(`${x.protocol}/${x.port}`, { port: x.port, protocol: x.protocol });
  }
  const out = [...seen.values()].sort((a, b) => a.protocol.localeCompare(b.protocol)
    || a.port - b.port).slice(0, MAX_DEFAULT_TARGETS);
  return out.length ? out : [{ port: 80, protocol: 'TCP' }];
}

export function netpolTables(objs: readonly KubeObject[], targets?: readonly PortTarget[])
  : NetpolTable[] {
  const m = modelFromObjects(objs);
  // hostNetwork pods are not rows or columns: their traffic is the node's (upstream leaves
  // policy for them undefined), and they have no network namespace of their own to probe from.
  const hostNetwork = new Set(objs.filter((o) => o.kind === 'Pod'
    && (o.spec as { hostNetwork?: boolean } | undefined)?.hostNetwork)
    .map((o) => `${o.metadata?.namespace ?? 'default'}/${o.metadata?.name ?? ''}`));
  const pods = [...m.pods].filter((p) => p.ips.length > 0 && !hostNetwork.has(`${p.namespace}/${p.name}`))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  return (targets ?? defaultTargets(m)).map((t) => {
    const r = reachabilityMatrix(m, t.port, t.protocol, pods);
    const keys = r.table.froms;
    return { ...t, classes: r.classes, evaluations: r.evaluations, pods: keys,
      values: keys.map((f) => keys.map((to) => r.table.get(f, to) === true)),
      text: r.table.prettyPrint() };
  });
}

export function renderNetpolTables(tables: readonly NetpolTable[], policies: number): string {
  const out: string[] = [];
  for (const t of tables) {
    out.push(`${t.protocol}/${t.port} (${t.pods.length} pods, ${policies} policies, `
      + `${t.classes} classes, ${t.evaluations} evaluations):`, t.text, '');
  }
  return `${out.join('\n')}`;
}
