// Root only: every nftables golden is applied with `nft -f` in a throwaway network namespace
// (its lines reordered table, chains, sets/maps, rules, elements: upstream's canonical order
// lists rules before the sets they reference, which nft cannot load as is), read back with
// `nft list table` and `nft -j list table`, and compared with the golden's own
// state after normalising what the kernel rewrites. The proxier's real first transaction (with
// its flushes and base-chain re-creation) and a partial-sync sequence are applied too.

import { afterAll, describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { applyNft, nftList } from '../../src/host/rules.js';
import { compileConfigs, compileWith, feedObjects } from '../../src/proxy/compile.js';
import { ProxyPipeline } from '../../src/proxy/pipeline.js';
import * as nftables from '../../src/proxy/nftables/proxier.js';
import { applyTransaction, dumpOps } from '../../src/ruleset/nftables/fake.js';
import { parseListJson } from '../../src/ruleset/nftables/list-json.js';
import { formatListText, parseListText } from '../../src/ruleset/nftables/list-text.js';
import { emptyRuleset, type NftRuleset } from '../../src/ruleset/nftables/model.js';
import { diffRulesets, normalizeRuleset } from '../../src/ruleset/nftables/normalize.js';
import { formatTransaction, parseTransaction } from '../../src/ruleset/nftables/transaction.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { compileOptions, listScenarios, loadScenario, runSequence } from '../helpers/scenarios.js';
import { generateServices } from '../helpers/service-generator.js';

const enabled = canUseNetns(['ip', 'nft']);
const exec = buildHostExec();
const created = new Set<string>();

async function freshNetns(): Promise<string> {
  const ns = testNetnsName();
  created.add(ns);
  await ensureNetns(exec, ns);
  return ns;
}

async function dropNetns(ns: string): Promise<void> {
  await deleteNetns(exec, ns);
  created.delete(ns);
}

/** The kernel's tables (those of `expected`) as text and JSON, each normalised. */
async function readBack(ns: string, expected: NftRuleset): Promise<{ text: NftRuleset;
  json: NftRuleset; rawText: string }> {
  let rawText = '';
  let jsonRs: NftRuleset = emptyRuleset();
  for (const t of expected.tables.values()) {
    rawText += await nftList(exec, ns, ['list', 'table', t.family, t.name]);
    const j = parseListJson(await nftList(exec, ns, ['-j', 'list', 'table', t.family, t.name]));
    for (const [k, v] of j.ruleset.tables) jsonRs.tables.set(k, v);
  }
  jsonRs = normalizeRuleset(jsonRs);
  return { text: normalizeRuleset(parseListText(rawText)), json: jsonRs, rawText };
}

function stateOf(...transactions: string[]): NftRuleset {
  let rs = emptyRuleset();
  for (const t of transactions) rs = applyTransaction(rs, parseTransaction(t));
  return rs;
}

describe.skipIf(!enabled)('nftables goldens in the kernel', () => {
  afterAll(async () => {
    for (const ns of created) await deleteNetns(exec, ns);
  });

  for (const name of listScenarios()) {
    it(`scenario ${name} applies and reads back (text and JSON) as its golden`, async () => {
      const s = loadScenario(name);
      const golden = compileWith(nftables, compileOptions(s, 'nftables'));
      const expected = normalizeRuleset(stateOf(golden));
      const ns = await freshNetns();
      await applyNft(exec, ns, formatTransaction(dumpOps(stateOf(golden))));
      const got = await readBack(ns, expected);
      expect(diffRulesets(expected, got.text)).toEqual([]);
      expect(diffRulesets(expected, got.json, { ignoreObjectComments: true })).toEqual([]);
      expect(formatListText(parseListText(got.rawText))).toBe(got.rawText);
      await dropNetns(ns);
    });
  }

  it('the first-sync transaction itself (flushes, base-chain re-creation) applies twice',
    async () => {
    const s = loadScenario('05-loadbalancer-source-ranges');
    const tx = compileWith(nftables, compileOptions(s, 'nftables', false));
    const ns = await freshNetns();
    await applyNft(exec, ns, tx);
    await applyNft(exec, ns, tx);
    const expected = normalizeRuleset(stateOf(tx));
    expect(diffRulesets(expected, (await readBack(ns, expected)).text)).toEqual([]);
    await dropNetns(ns);
  });

  it('stale chains of a deleted service are flushed, then deleted by the kernel a second later',
    async () => {
      const s = loadScenario('17-partial-sync');
      let now = 0;
      type Config = Parameters<typeof nftables.buildProxier>[0];
      const clocked = { ...nftables,
        buildProxier: (c: Config) => nftables.buildProxier(c, { now: () => now }) };
      const { pipeline, results } = runSequence(s, 'nftables', clocked);
      const ns = await freshNetns();
      for (const r of results) for (const a of r.result.artifacts) await applyNft(exec, ns, a.text);
      now += 5000;
      const late = pipeline.sync();
      pipeline.commit(true);
      expect(late.artifacts.map((a) => a.text).join('')).toMatch(/^delete chain ip kube-proxy /m);
      for (const a of late.artifacts) await applyNft(exec, ns, a.text);
      const last = s.steps[s.steps.length - 1]!.objects;
      const fresh = compileWith(nftables, compileOptions(s, 'nftables', true, last));
      const expected = normalizeRuleset(stateOf(fresh));
      expect(diffRulesets(expected, (await readBack(ns, expected)).text)).toEqual([]);
      await dropNetns(ns);
    });

  it('a partial-sync sequence leaves the kernel as the fake that applied the same transactions',
    async () => {
      const s = loadScenario('17-partial-sync');
      const { results } = runSequence(s, 'nftables', nftables);
      const texts = results.flatMap((r) => r.result.artifacts.map((a) => a.text));
      const ns = await freshNetns();
      for (const t of texts) await applyNft(exec, ns, t);
      const expected = normalizeRuleset(stateOf(...texts));
      expect(diffRulesets(expected, (await readBack(ns, expected)).text)).toEqual([]);
      await dropNetns(ns);
    });

  it('a large first sync, written to nft piece by piece, loads as its joined text says',
    async () => {
      const objects = generateServices(1500, { seed: 7 });
      const [config] = compileConfigs({ objects, mode: 'nftables', nodeName: 'node-0',
        nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
      const pipeline = new ProxyPipeline(nftables.buildProxier(config!));
      feedObjects(pipeline, objects);
      const [art] = pipeline.sync().artifacts;
      expect(art!.chunks!.length).toBeGreaterThan(100);
      const ns = await freshNetns();
      await applyNft(exec, ns, art!.chunks!);
      const expected = normalizeRuleset(stateOf(art!.text));
      expect(diffRulesets(expected, (await readBack(ns, expected)).text)).toEqual([]);
      await dropNetns(ns);
    });
});
