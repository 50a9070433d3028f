// Root only: every packet flow of every `rules/*/flows.yaml` runs through the tracer and through
// real packets in a live lab (network namespaces) with the scenario's golden applied, in
// iptables and nftables mode; both must agree on the verdict, the endpoints reached and the
// source address the server sees. Each flow's destination is also sent from the other kinds of
// sender (derived flows: a local pod, the node, an outside client), where the simulation is the
// only expectation. Where they truly differ the case is listed in KNOWN with the reason;
// everything else must agree. SCTP flows are skipped (Node has no SCTP sockets) and counted.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, listNetns } from '../../src/host/netns.js';
import type { Disagreement } from '../../src/trace/live/compare.js';
import { type FidelityReport, type FidelityScenario, runFidelity }
  from '../../src/trace/live/fidelity.js';
import type { LabMode } from '../../src/trace/live/lab.js';
import { deriveFlows } from '../../src/trace/live/derive.js';
import { loadFlows } from '../helpers/flows.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { listScenarios, loadScenario } from '../helpers/scenarios.js';

const enabled = canUseNetns(['ip', 'nft', 'iptables-restore', 'ip6tables-restore', 'conntrack']);
const MODES: readonly LabMode[] = ['iptables', 'nftables'];

/** `scenario|mode|flow|field` → why the kernel and the tracer differ there. */
const KNOWN: Readonly<Record<string, string>> = {};

const keyOf = (d: Disagreement) => `${d.scenario}|${d.mode}|${d.flow}|${d.field}`;

/** Lab prefixes of this file; afterAll removes whatever a lab interrupted mid-way left. */
const prefixes: string[] = [];
function labPrefix(): string {
  const p = testNetnsName();
  prefixes.push(p);
  return p;
}

afterAll(async () => {
  if (prefixes.length === 0) return;
  const exec = buildHostExec();
  const left = (await listNetns(exec)).filter((n) => prefixes.some((p) => n.startsWith(`${p}-`)));
  await Promise.all(left.map((n) => deleteNetns(exec, n)));
});

function scenarioInput(name: string, skipped: string[]): FidelityScenario {
  const s = loadScenario(name);
  const rules: Partial<Record<LabMode, string>> = {};
  for (const mode of MODES) {
    const golden = join(s.dir, `${mode}.golden`);
    if (!existsSync(golden)) continue;
    if (mode === 'iptables' && s.node.capabilities.nfacct) {
      skipped.push(`${name} ${mode}: nfacct counters would have to exist first (no nfacct tool)`);
      continue;
    }
    rules[mode] = readFileSync(golden, 'utf8');
  }
  return { name, nodeIPs: s.node.ips, podCIDRs: s.node.podCIDRs, rules, flows: loadFlows(s.dir) };
}

function withDerived(input: FidelityScenario): FidelityScenario {
  return { ...input, flows: [...input.flows, ...deriveFlows(input)] };
}

describe.runIf(enabled)('live fidelity: the tracer and the kernel agree on every flow', () => {
  const exec = buildHostExec();
  const reports: FidelityReport[] = [];
  const notes: string[] = [];
  let derived = 0;

  afterAll(() => {
    const flows = reports.reduce((n, r) => n + r.flows, 0);
    const probes = reports.reduce((n, r) => n + r.probes, 0);
    const skips = reports.flatMap((r) =>
      r.skipped.map((k) => `${k.scenario} ${k.flow}: ${k.reason}`));
    console.info(`live fidelity: ${flows} flow×mode cases (${derived} derived), ` +
      `${probes} probes; ` +
      `skipped ${skips.length + notes.length}:\n  ${[...notes, ...skips].join('\n  ')}`);
  });

  for (const name of listScenarios()) {
    it.concurrent(`rules/${name}: every flow and derived flow agrees in iptables and nftables mode`,
      async () => {
      const input = scenarioInput(name, notes);
      if (input.flows.length === 0 || Object.keys(input.rules).length === 0) return;
      const all = withDerived(input);
      derived += (all.flows.length - input.flows.length) * Object.keys(input.rules).length;
      const report = await runFidelity(exec, all, { prefix: labPrefix() });
      reports.push(report);
      const known = report.disagreements.filter((d) => KNOWN[keyOf(d)]);
      for (const d of known) notes.push(`known: ${keyOf(d)}: ${KNOWN[keyOf(d)]}`);
      expect(report.disagreements.filter((d) => !KNOWN[keyOf(d)])).toEqual([]);
      expect(report.flows).toBeGreaterThan(0);
    }, 300_000);
  }
});

// The comparison can fail: the same flows against a kernel holding other rules than the ones
// simulated must produce the disagreements that difference implies.
describe.runIf(enabled)('live fidelity catches a kernel that differs from the simulation', () => {
  it('a missing hairpin mark (iptables) and missing service rules (nftables) are reported',
    async () => {
    const input = scenarioInput('01-clusterip', []);
    const noHairpin = input.rules.iptables!.split('\n')
      .filter((l) => !/-s 10\.244\.1\.5 -j KUBE-MARK-MASQ/.test(l)).join('\n');
    const report = await runFidelity(buildHostExec(), {
      ...input,
      applied: { iptables: noHairpin, nftables: 'add table ip kube-proxy\n' },
    }, { prefix: labPrefix() });
    const found = report.disagreements.map(keyOf);
    expect(found).toEqual(expect.arrayContaining([
      '01-clusterip|iptables|endpoint reaching itself through the service is hairpin-masqueraded' +
        '|masquerade',
      '01-clusterip|nftables|pod to cluster IP is balanced over both endpoints without masquerade' +
        '|verdict',
      '01-clusterip|nftables|wrong port is not touched|verdict',
    ]));
    const wrongPort = report.disagreements.find((d) => d.mode === 'nftables'
      && d.flow === 'wrong port is not touched');
    expect(wrongPort).toMatchObject({ simulated: 'REJECT', observed: 'NONE×1' });
    expect(found.filter((k) => k.includes('|iptables|'))).toHaveLength(1);
  }, 300_000);
});
