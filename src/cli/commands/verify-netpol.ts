// `kdp verify --netpol`: the NetworkPolicy reachability truth tables (upstream e2e format, rows
// from, columns to, `.` allowed, `X` denied) computed offline from the cluster's current
// Namespaces, Pods, NetworkPolicies and Nodes — or from manifests with `-f`.

import type { Client, KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import { netpolTables, renderNetpolTables } from '../../netpol/report.js';
import type { PortTarget } from '../../netpol/report.js';
import type { CliIO } from '../command.js';
import { loadManifests } from './rules-compile.js';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { renderLiveTables, type LiveMatrixResult } from '../../netpol/live-matrix.js';
import type { NetpolTable } from '../../netpol/report.js';

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

/** The objects `--netpol` reads from a running cluster. */
export async function fromCluster(client: Client): Promise<KubeObject[]> {
  const list = async (group: string, resource: string, kind: string): Promise<KubeObject[]> =>
    (await client.list({ group, version: 'v1', resource })).items
      .map((o) => ({ ...o, kind, apiVersion: group ? `${group}/v1` : 'v1' }));
  return [...await list('', 'namespaces', 'Namespace'), ...await list('', 'nodes', 'Node'),
    ...await list('', 'pods', 'Pod'),
    ...await list('networking.k8s.io', 'networkpolicies', 'NetworkPolicy')];
}

/**
 * Runs `--netpol`. `client` is called only without `-f`. Exit 0: the tables are information,
 * not a verdict. With `--live` (netns cluster, root) every cell is also probed for real: exit 3
 * when any cell disagrees (a FIDELITY BUG), else 0.
 */
export async function runVerifyNetpol(flags: Record<string, unknown>, io: CliIO,
  client: () => Client): Promise<number> {
  const targets = typeof flags.ports === 'string' ? parsePortTargets(flags.ports) : undefined;
  if (flags.live && typeof flags.filename === 'string') {
    throw kdpError('KDP_CONFIG', '--live probes a running cluster, not -f manifests');
  }
  const objs = typeof flags.filename === 'string'
    ? await loadManifests([flags.filename])
    : await fromCluster(client());
  const tables = netpolTables(objs, targets);
  const policies = objs.filter((o) => o.kind === 'NetworkPolicy').length;
  const live = flags.live ? await runLive(flags, io, client(), objs, tables) : undefined;
  if (flags.output === 'json') {
    io.out(`${JSON.stringify({ policies, tables: tables.map(({ text: _t, ...rest }) => rest),
      ...(live ? { live: liveJson(live) } : {}) }, null, 2)}\n`);
  } else {
    io.out(renderNetpolTables(tables, policies));
    if (live) io.out(renderLiveTables(live));
  }
  return live && live.bugs > 0 ? 3 : 0;
}

async function runLive(flags: Record<string, unknown>, io: CliIO, client: Client,
  objs: readonly KubeObject[], tables: readonly NetpolTable[]): Promise<LiveMatrixResult> {
  const paths = dataDirPaths(resolveDataDir(flags['data-dir'] as string | undefined, io.env));
  const { runNetpolLive } = await import('./verify-netpol-live.js');
  const positive = (name: string, dflt: number): number => {
    const v = flags[name] === undefined ? dflt : Number(flags[name]);
    if (!Number.isInteger(v) || v < 1) throw kdpError('KDP_CONFIG', `--${name} must be a positive integer`);
    return v;
  };
  return runNetpolLive({ paths, info: readClusterInfo(paths), client, objs, tables, io,
    viaService: flags['via-service'] === true, timeoutMs: positive('probe-timeout', 1000),
    parallel: positive('parallel', 64) });
}

function liveJson(r: LiveMatrixResult): Record<string, unknown> {
  return { probes: r.probes, bugs: r.bugs, ms: r.ms, tables: r.tables.map((t) => ({
    port: t.port, protocol: t.protocol, ...(t.skipped ? { skipped: t.skipped } : {}), probes: t.probes,
    ...(t.observed ? { observed: t.observed.froms.map((f) => t.observed!.tos.map((to) =>
      t.observed!.get(f, to) ?? null)) } : {}),
    bugs: t.bugs })) };
}
