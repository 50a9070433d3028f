import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/netpol/evaluate.js';
import { podKey } from '../../src/netpol/model.js';
import { compileNetpolNftables } from '../../src/netpol/nftables.js';
import { parseNetpolNft, simulateForward } from '../../src/netpol/nft-sim.js';
import { KDP_SCENARIOS, UPSTREAM_SCENARIOS } from './scenarios/upstream-e2e.js';
import { playScenario } from './scenarios/run.js';

// The compiled tables, walked packet by packet, must agree with the evaluator on every cell of
// every scenario check: the source node's table (egress) and the destination node's (ingress).
describe('the compiled nftables agree with the evaluator', () => {
  for (const s of [...UPSTREAM_SCENARIOS, ...KDP_SCENARIOS]) {
    it(s.name, () => {
      const wrong: string[] = [];
      for (const { step, check, model } of playScenario(s)) {
        const tables = new Map([...model.nodeIPs.keys()].map((n) =>
          [n, parseNetpolNft(compileNetpolNftables(model, { node: n }))]));
        for (const from of model.pods) {
          for (const to of model.pods) {
            if (from === to) continue;
            const want = evaluate(model, { from: { pod: from }, to, port: check.port,
              protocol: check.protocol }).allowed;
            const nodes = [...new Set([from.node!, to.node!])];
            const pkt = { saddr: from.ips[0]!, daddr: to.ips[0]!, dport: check.port,
              protocol: check.protocol.toLowerCase() as 'tcp' };
            const got = nodes.every((n) => simulateForward(tables.get(n)!, pkt).verdict
              === 'accept');
            if (got !== want) {
              wrong.push(`step ${step} ${check.protocol}/${check.port} ${podKey(from)} → `
                + `${podKey(to)}: evaluator ${want}, nft ${got}`);
            }
          }
        }
      }
      expect(wrong).toEqual([]);
    });
  }
});
