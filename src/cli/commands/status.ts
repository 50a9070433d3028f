// `kdp status`: is a cluster running here, where, and how are its nodes (readiness, whether each
// node's kube-proxy could apply its last sync, and in netns mode whether each node's kernel
// rules match what its kube-proxy compiled)?

import type { Node } from '../../api/types.js';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import type { Command } from '../command.js';
import {
  readApplyStatus, readDriftStatus, rulesDir, type ApplyStatus, type DriftStatus,
} from '../../proxy/history.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

/**
 * The RULES column: a failed apply first (the kernel keeps older rules), then kernel rules vs
 * what kube-proxy compiled (netns mode's drift checks), else whether anything was applied.
 */
export function rulesState(statuses: readonly DriftStatus[],
  applies: readonly ApplyStatus[] = []): string {
  const failed = applies.filter((a) => a.failed);
  if (failed.length) {
    return failed.map((a) => `FAILED ${a.family} (${a.failures} in a row)`).join(', ');
  }
  if (statuses.length === 0) return applies.length ? 'applied' : '-';
  const bad = statuses.filter((s) => !s.inSync);
  if (bad.length) return bad.map((s) => `DRIFT ${s.family} (${s.lastDrift?.count ?? 0})`).join(', ');
  const healed = statuses.filter((s) => s.drifts > 0);
  return healed.length ? `in sync (drift healed ${healed.map((s) => `${s.drifts}×`).join('/')})`
    : 'in sync';
}

/** An applier's error on one line, bounded (a restore's stderr spans lines). */
export function errorSummary(message: string, max = 300): string {
  const one = message.trim().split(/\s*\n\s*/).join(' / ');
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/** One indented line per failing family: since when, and the last error. */
export function applyFailureLines(applies: readonly ApplyStatus[], indent: string): string {
  return applies.filter((a) => a.failed).map((a) => `${indent}${a.family} apply failing since ` +
    `${a.since}: ${errorSummary(a.lastError?.message ?? '')}\n`).join('');
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'show the running cluster: API server, mode, nodes and their readiness',
  flags: [DATA_DIR_FLAG, { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' }],
  async run(args, io) {
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    const info = readClusterInfo(paths);
    const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
    const nodes = (await client.list<Node>({ group: '', version: 'v1', resource: 'nodes' })).items.map((n) => ({
      name: n.metadata.name!,
      ready: n.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown',
      podCIDR: n.spec?.podCIDR ?? '',
      ip: n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '',
    }));
    const drift = Object.fromEntries(info.nodes.map((n) =>
      [n.name, readDriftStatus(rulesDir(paths.root, n.name))]));
    const apply = Object.fromEntries(info.nodes.map((n) =>
      [n.name, readApplyStatus(rulesDir(paths.root, n.name))]));
    const status = { ...info, nodeStatus: nodes.map((n) => ({ ...n,
      ruleDrift: drift[n.name] ?? [], ruleApply: apply[n.name] ?? [] })) };
    if (args.flags.output === 'json') {
      io.out(`${JSON.stringify(status, null, 2)}\n`);
      return 0;
    }
    io.out(`cluster: ${info.url} (pid ${info.pid}, ${info.mode} mode, kube-proxy ${info.proxyMode}, time-scale ${info.timeScale})\n`);
    io.out(`kubeconfig: ${info.kubeconfig}\n\nNODE  READY    IP            POD CIDR        RULES\n`);
    for (const n of nodes) {
      io.out(`${n.name.padEnd(5)} ${n.ready.padEnd(8)} ${n.ip.padEnd(13)} ${n.podCIDR.padEnd(15)} ` +
        `${rulesState(drift[n.name] ?? [], apply[n.name] ?? [])}\n`);
      io.out(applyFailureLines(apply[n.name] ?? [], '      '));
    }
    return 0;
  },
};
