// Root only: every iptables golden is applied with `iptables-restore --noflush` in a throwaway
// network namespace, read back with `iptables-save` and compared with the golden after
// normalising what the kernel rewrites; the partial-sync sequence applied step by step leaves
// the same kernel state as a full compile of the last step. Every `iptables-save` dump read
// back also round-trips the parser and formatter byte for byte. Scenarios compiled for a host with
// nfacct are not applied (their counters would have to be created first).

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { applyIptablesRestore, iptablesSave } from '../../src/host/rules.js';
import type { IptablesFamily } from '../../src/host/rules.js';
import * as iptables from '../../src/proxy/iptables/proxier.js';
import { compileWith } from '../../src/proxy/compile.js';
import { format } from '../../src/ruleset/iptables/format.js';
import { parse } from '../../src/ruleset/iptables/parse.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { normaliseDump } from '../helpers/iptables-normalise.js';
import { compileOptions, goldenPath, listScenarios, loadScenario, runSequence }
  from '../helpers/scenarios.js';

const enabled = canUseNetns(['ip', 'iptables-restore', 'iptables-save', 'ip6tables-restore']);
const exec = buildHostExec();
const created: string[] = [];

async function freshNetns(): Promise<string> {
  const ns = testNetnsName();
  created.push(ns);
  await ensureNetns(exec, ns);
  return ns;
}

/** The namespace's KUBE-* chains, normalised; every dump must also round-trip the parser. */
async function kernelState(ns: string, family: IptablesFamily): Promise<Map<string, string[]>> {
  const filter = await iptablesSave(exec, ns, family, 'filter');
  const nat = await iptablesSave(exec, ns, family, 'nat');
  expect(format(parse(filter))).toBe(filter);
  expect(format(parse(nat))).toBe(nat);
  return normaliseDump(filter + nat);
}

describe.skipIf(!enabled)('iptables goldens in the kernel', () => {
  afterAll(async () => {
    for (const ns of created) await deleteNetns(exec, ns);
  });

  for (const name of listScenarios()) {
    it(`scenario ${name} applies and reads back as its golden`, async () => {
      const s = loadScenario(name);
      // nfacct objects would have to exist in the namespace first (no nfacct tool here).
      if (s.node.capabilities.nfacct) return;
      const family: IptablesFamily = s.node.ips.some((ip) => ip.includes(':')) ? 'ipv6' : 'ipv4';
      const text = readFileSync(goldenPath(s, 'iptables'), 'utf8');
      const ns = await freshNetns();
      await applyIptablesRestore(exec, ns, text, family);
      expect(await kernelState(ns, family)).toEqual(normaliseDump(text));
      await deleteNetns(exec, ns);
    });
  }

  it('a partial-sync sequence leaves the kernel as a full sync of its last step', async () => {
    const s = loadScenario('17-partial-sync');
    const { results } = runSequence(s, 'iptables', iptables);
    const ns = await freshNetns();
    for (const r of results) await applyIptablesRestore(exec, ns, r.result.artifacts[0]!.text);
    const last = s.steps[s.steps.length - 1]!.objects;
    const full = compileWith(iptables, compileOptions(s, 'iptables', true, last));
    expect(await kernelState(ns, 'ipv4')).toEqual(normaliseDump(full));
    await deleteNetns(exec, ns);
  });
});
