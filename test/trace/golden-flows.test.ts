import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { traceOffline, type TraceMode } from '../../src/trace/offline.js';
import { flowExpectation, flowOutcome, flowPacket, loadFlows } from '../helpers/flows.js';
import { listScenarios, loadScenario } from '../helpers/scenarios.js';

// The tracer is the oracle: every packet-flow case of every scenario must hold for every mode
// the tracer can interpret, over the golden table that mode's compiler produced.
const MODES: readonly TraceMode[] = ['iptables', 'nftables', 'ipvs'];

for (const name of listScenarios()) {
  const s = loadScenario(name);
  const flows = loadFlows(s.dir);
  if (flows.length === 0) continue;
  describe(`rules/${name} flows`, () => {
    for (const mode of MODES) {
      const golden = join(s.dir, `${mode}.golden`);
      if (!existsSync(golden)) continue;
      const rules = readFileSync(golden, 'utf8');
      for (const f of flows) {
        it(`${mode}: ${f.name}`, () => {
          const p = flowPacket(f);
          const r = traceOffline({ rules, mode, nodeIPs: s.node.ips, podCIDRs: s.node.podCIDRs, ...p });
          expect(flowOutcome(f, r)).toEqual(flowExpectation(f, mode));
        });
      }
    }
  });
}
