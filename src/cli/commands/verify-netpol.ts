// `kdp verify --netpol`: the NetworkPolicy reachability truth tables (upstream e2e format, rows
// from, columns to, `.` allowed, `X` denied) computed offline from the cluster's current
// Namespaces, Pods, NetworkPolicies and Nodes — or from manifests with `-f`.

import type { Client, KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import { netpolTables, renderNetpolTables } from '../../netpol/report.js';
import type { PortTarget } from '../../netpol/report.js';
import type { CliIO } from '../command.js';
import { loadManifests } from './rules-compile.js';

/** `80/TCP,81,53/UDP` → targets (protocol TCP when omitted). */
export function parsePortTargets(s: string): PortTarget[] {
  return s.split(',').map((x) => x.trim()).filter(Boolean).map((x) => {
    const m = /^(\d{1,5})(?:\/(TCP|UDP|SCTP))?$/i.exec(x);
    const port = m ? Number(m[1]) : 0;
    if (!m || port < 1 || port > 65535) {
      throw kdpError('KDP_CONFIG', `--ports: "${x}" is not PORT[/TCP|UDP|SCTP] with 1 <= PORT `
        + '<= 65535');
    }
    return { port, protocol: (m[2] ?? 'TCP').toUpperCase() as PortTarget['protocol'] };
  });
}

async function fromCluster(client: Client): Promise<KubeObject[]> {
  const list = async (group: string, resource: string, kind: string): Promise<KubeObject[]> =>
    (await client.list({ group, version: 'v1', resource })).items
      .map((o) => ({ ...o, kind, apiVersion: group ? `${group}/v1` : 'v1' }));
  return [...await list('', 'namespaces', 'Namespace'), ...await list('', 'nodes', 'Node'),
    ...await list('', 'pods', 'Pod'),
    ...await list('networking.k8s.io', 'networkpolicies', 'NetworkPolicy')];
}

/**
 * Runs `--netpol`. `client` is called only without `-f`. Exit 0: the tables are information,
 * not a verdict.
 */
export async function runVerifyNetpol(flags: Record<string, unknown>, io: CliIO,
  client: () => Client): Promise<number> {
  const targets = typeof flags.ports === 'string' ? parsePortTargets(flags.ports) : undefined;
  const objs = typeof flags.filename === 'string'
    ? await loadManifests([flags.filename])
    : await fromCluster(client());
  const tables = netpolTables(objs, targets);
  const policies = objs.filter((o) => o.kind === 'NetworkPolicy').length;
  if (flags.output === 'json') {
    io.out(`${JSON.stringify({ policies, tables: tables.map(({ text: _t, ...rest }) => rest) },
      null, 2)}\n`);
  } else {
    io.out(renderNetpolTables(tables, policies));
  }
  return 0;
}
