// Root only: the tracer reads what the kernel prints, not only what kube-proxy wrote. Every
// iptables and nftables golden is applied in a throwaway namespace, read back with
// `iptables-save` / `nft list table` (which spell rules their own way: `&` for `and`, expanded
// hex, reordered matches), and every packet-flow case of the scenario is traced over that
// listing with the same expected outcome as over the golden.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { applyIptablesRestore, applyNft, iptablesSave, nftList } from '../../src/host/rules.js';
import { applyTransaction, dumpOps } from '../../src/ruleset/nftables/fake.js';
import { emptyRuleset } from '../../src/ruleset/nftables/model.js';
import { formatTransaction, parseTransaction } from '../../src/ruleset/nftables/transaction.js';
import { traceOffline } from '../../src/trace/offline.js';
import { flowExpectation, flowOutcome, flowPacket, loadFlows } from '../helpers/flows.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { listScenarios, loadScenario } from '../helpers/scenarios.js';

const enabled = canUseNetns(['ip', 'nft', 'iptables-restore', 'ip6tables-restore']);
const exec = buildHostExec();
/** The kernel here has no nfacct: a golden that uses it cannot be applied (reported, not hidden). */
const NEEDS_NFACCT = /-m nfacct /;

describe.runIf(enabled)('tracing the kernel\'s own listing of each golden', () => {
  // One fresh namespace per case: `--noflush` restores would otherwise leave the last case's chains.
  const made = new Set<string>();
  async function freshNetns(): Promise<string> {
    const ns = testNetnsName();
    made.add(ns);
    await ensureNetns(exec, ns);
    return ns;
  }
  afterAll(async () => { for (const ns of made) await deleteNetns(exec, ns); });

  for (const name of listScenarios()) {
    const s = loadScenario(name);
    const flows = loadFlows(s.dir);
    if (flows.length === 0) continue;
    const v6 = s.node.ips.some((ip) => ip.includes(':'));

    it(`nftables: rules/${name} flows hold over \`nft list table\``, async () => {
      const ns = await freshNetns();
      const golden = readFileSync(join(s.dir, 'nftables.golden'), 'utf8');
      const state = applyTransaction(emptyRuleset(), parseTransaction(golden));
      await applyNft(exec, ns, formatTransaction(dumpOps(state)));
      let listed = '';
      for (const t of state.tables.values()) listed += await nftList(exec, ns, ['list', 'table', t.family, t.name]);
      for (const f of flows) {
        const r = traceOffline({ rules: listed, mode: 'nftables', nodeIPs: s.node.ips, podCIDRs: s.node.podCIDRs,
          ...flowPacket(f) });
        expect(flowOutcome(f, r), f.name).toEqual(flowExpectation(f, 'nftables'));
      }
    });

    const iptablesGolden = join(s.dir, 'iptables.golden');
    if (!existsSync(iptablesGolden)) continue;
    const text = readFileSync(iptablesGolden, 'utf8');
    it.skipIf(NEEDS_NFACCT.test(text))(`iptables: rules/${name} flows hold over \`iptables-save\``, async () => {
      const ns = await freshNetns();
      const family = v6 ? 'ipv6' : 'ipv4';
      await applyIptablesRestore(exec, ns, text, family);
      const listed = await iptablesSave(exec, ns, family);
      for (const f of flows) {
        const r = traceOffline({ rules: listed, mode: 'iptables', nodeIPs: s.node.ips, podCIDRs: s.node.podCIDRs,
          ...flowPacket(f) });
        expect(flowOutcome(f, r), f.name).toEqual(flowExpectation(f, 'iptables'));
      }
    });
  }
});
