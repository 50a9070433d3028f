// `kdp verify`: check the Kubernetes network model on the running cluster, by tracing.

import type { EndpointSlice, Pod, Service } from '../../api/types.js';
import { readClusterInfo, type ClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir, type DataDirPaths } from '../../cluster/data-dir.js';
import type { Client } from '../../client/types.js';
import { assertLiveCapable, buildLiveCluster } from '../../trace/live/live-trace-cluster.js';
import { verifyLive, type LiveVerifyResult } from '../../trace/live/live-trace-verify.js';
import type { Topology } from '../../trace/topology.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { loadTopology } from '../../trace/cluster.js';
import { verifyCluster, type VerifyCheck } from '../../trace/verify.js';
import { verifyClusterDns } from '../../trace/verify-dns.js';
import { verifyLiveDns } from '../../trace/live/live-dns.js';
import type { LiveCluster } from '../../trace/live/live-trace.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { clusterDnsOf } from '../../dns/cluster-view.js';
import type { CliIO, Command } from '../command.js';
import { liveJson, renderTrace } from '../render-trace.js';
import { traceJson } from './trace.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';
import { NETPOL_FLAGS } from './verify-netpol-flags.js';

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'check the network model: pod↔pod without NAT, unique IPs, every Service and NodePort, cluster DNS',
  exits: [
    { code: 0, meaning: 'every check passed (with --netpol: the truth tables are printed; they are information, not a verdict)' },
    { code: 1, meaning: 'a check failed (the failures are listed), or the command failed' },
    { code: 3, meaning: 'with --netpol --live: a probed cell disagrees with the computed table (a fidelity bug)' },
  ],
  flags: [
    { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' },
    { name: 'show', type: 'number', default: 3, help: 'failures shown in full (with their trace) per check' },
    {
      name: 'live', type: 'boolean',
      help: 'netns cluster, root: also send sampled probes for real and compare with the simulation',
    },
    { name: 'sample', type: 'number', default: 5, help: 'with --live: random pod pairs, and as many Service checks' },
    { name: 'seed', type: 'number', default: 1, help: 'with --live: seed of the sample (same seed, same probes)' },
    ...NETPOL_FLAGS,
    DATA_DIR_FLAG,
  ],
  async run(args, io) {
    if (args.flags.netpol) {
      const { runVerifyNetpol } = await import('./verify-netpol.js');
      return runVerifyNetpol(args.flags, io, () => buildHttpClient(loadKubeconfig(readClusterInfo(
        dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env)))
        .kubeconfig)));
    }
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    const info = readClusterInfo(paths);
    if (args.flags.live) assertLiveCapable('kdp verify', info, paths);
    const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
    // The model (every pod reaches every pod, Services reach their endpoints) holds beneath
    // NetworkPolicy, which may deny any of it by design: those checks trace the nodes' tables
    // without the policy tables, and `--netpol` checks the policies. Live probes meet the real
    // kernel, policies included, so their simulation includes them.
    const policies = (await client.list({ group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies' })).items.length;
    const topo = await loadTopology(client, paths.root, info.proxyMode);
    // Without policies the two views are one: no second read of the cluster.
    const modelTopo = policies > 0 ? await loadTopology(client, paths.root, info.proxyMode, { netpol: false }) : topo;
    const services = (await client.list<Service>({ group: '', version: 'v1', resource: 'services' })).items;
    const slices = (await client.list<EndpointSlice>({ group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' })).items;
    const started = Date.now();
    const checks = verifyCluster({ topo: modelTopo, services, slices });
    const view = await clusterDnsOf(client, services, slices);
    checks.push(...verifyClusterDns({ topo: modelTopo, services, slices, view }));
    if (policies > 0) {
      checks.push({ name: 'NetworkPolicy', cases: 0, failures: [],
        skipped: `${policies} NetworkPolic${policies === 1 ? 'y' : 'ies'}: the checks above judge the network beneath them; ` +
          '`kdp verify --netpol` checks what they allow' });
    }
    const live = args.flags.live ? await runLive({ paths, info, client, topo, services }, args.flags, io) : undefined;
    if (live) checks.push(...live.checks);
    if (live && view.addon) {
      checks.push(await verifyLiveDns(live.cluster, { services, slices, zone: view.config.zone,
        n: args.flags.sample as number, dig: findDig() }));
    }
    const failed = checks.reduce((a, c) => a + c.failures.length, 0);
    if (args.flags.output === 'json') {
      const liveTraces = live?.traces.map((t) => ({
        source: t.simulated.source.label, target: t.simulated.destination.label, ...liveJson(t),
      }));
      io.out(`${JSON.stringify({ ok: failed === 0, checks: checks.map(jsonCheck),
        ...(liveTraces ? { live: liveTraces } : {}) }, null, 2)}\n`);
    } else {
      const ms = Date.now() - started;
      // A dual-stack pod is in the topology once per IP: count pods by name.
      const pods = new Set(topo.pods.map((p) => p.name)).size;
      io.out(renderSummary(checks, pods, topo.nodes.length, ms, args.flags.show as number, io.isTTY));
    }
    return failed === 0 ? 0 : 1;
  },
};

/** `dig` (Debian's bind9-dnsutils) on PATH, or '' (the live DNS check is then skipped). */
function findDig(): string {
  const dirs = (process.env.PATH ?? '/usr/bin:/bin').split(':').filter(Boolean);
  return dirs.map((d) => join(d, 'dig')).find((f) => existsSync(f)) ?? '';
}

/** `--live`: sampled probes sent for real (see src/trace/live/live-trace-verify.ts). */
async function runLive(
  o: { paths: DataDirPaths; info: ClusterInfo; client: Client; topo: Topology; services: readonly Service[] },
  flags: Record<string, unknown>, io: CliIO,
): Promise<LiveVerifyResult & { cluster: LiveCluster }> {
  const cluster = await buildLiveCluster(o);
  const pods = (await o.client.list<Pod>({ group: '', version: 'v1', resource: 'pods' })).items;
  return { cluster, ...await verifyLive(cluster, {
    pods, services: o.services, n: flags.sample as number, seed: flags.seed as number,
    onProbe: (i, total, c) => {
      if (io.isTTY) io.err(`live probe ${i + 1}/${total}: ${c.src.label} → ${c.dst.label}\x1b[K\r`);
    },
  }) };
}

function jsonCheck(c: VerifyCheck) {
  return {
    name: c.name, cases: c.cases, failed: c.failures.length, ...(c.skipped ? { skipped: c.skipped } : {}),
    failures: c.failures.map((f) => ({ what: f.what, expected: f.expected, got: f.got, ...(f.trace ? { trace: traceJson(f.trace.result) } : {}) })),
  };
}

function renderSummary(checks: readonly VerifyCheck[], pods: number, nodes: number, ms: number, show: number, color: boolean): string {
  const lines = [`kdp verify: ${nodes} nodes, ${pods} pods (${ms} ms)`, '', 'RESULT  CASES   FAILED  CHECK'];
  for (const c of checks) {
    if (c.skipped) { lines.push(`skip    -       -       ${c.name}: ${c.skipped}`); continue; }
    lines.push(`${c.failures.length ? 'FAIL  ' : 'ok    '}  ${String(c.cases).padEnd(7)} ${String(c.failures.length).padEnd(7)} ${c.name}`);
  }
  for (const c of checks.filter((x) => x.failures.length)) {
    lines.push('', `✗ ${c.name}`);
    for (const f of c.failures.slice(0, show)) {
      lines.push(`  ${f.what}: expected ${f.expected}, got ${f.got}`);
      if (f.trace) lines.push(...renderTrace(f.trace.result, color).split('\n').map((l) => `    ${l}`));
    }
    if (c.failures.length > show) lines.push(`  … and ${c.failures.length - show} more (-o json lists all)`);
  }
  return `${lines.join('\n')}\n`;
}
