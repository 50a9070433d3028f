// The packet-flow cases of every scenario (rules/*/flows.yaml) hold on its iptables golden when
// traced with upstream's own packet-flow semantics (test/helpers/iptables-flow-tracer.ts), an
// oracle independent of kdp's tracer. A packet no rule decides is NONE, or ACCEPT when it is
// addressed to the node itself (delivered locally), as test/helpers/flows.ts defines.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flowExpectation, loadFlows } from '../helpers/flows.js';
import type { FlowOutcome } from '../helpers/flows.js';
import { tracePacket } from '../helpers/iptables-flow-tracer.js';
import { goldenPath, listScenarios, loadScenario } from '../helpers/scenarios.js';

function splitHostPort(s: string): [string, string] {
  const i = s.lastIndexOf(':');
  const host = s.slice(0, i);
  return [host.startsWith('[') ? host.slice(1, -1) : host, s.slice(i + 1)];
}

describe('iptables packet flows (upstream tracer semantics)', () => {
  for (const name of listScenarios()) {
    const s = loadScenario(name);
    const flows = loadFlows(s.dir);
    if (flows.length === 0) continue;
    const golden = readFileSync(goldenPath(s, 'iptables'), 'utf8');
    for (const f of flows) {
      it(`${name}: ${f.name}`, () => {
        const want = flowExpectation(f, 'iptables');
        const [ip, port] = splitHostPort(f.destination);
        const r = tracePacket(golden, s.node.ips, f.source, f.protocol, ip, port);
        const dnat = r.outputs.filter((o) => /:\d+$/.test(o));
        const local = ['127.0.0.1', '::1', ...s.node.ips].includes(ip);
        let got: FlowOutcome;
        if (dnat.length > 0) {
          got = { verdict: 'DNAT', masquerade: r.masquerade,
            ...(want.endpointCount !== undefined ? { endpointCount: dnat.length }
              : { endpoints: [...dnat].sort() }) };
        } else {
          const verdict = (r.outputs[0] ?? (local ? 'ACCEPT' : 'NONE')) as FlowOutcome['verdict'];
          got = { verdict, masquerade: r.masquerade,
            ...(want.endpointCount !== undefined ? { endpointCount: 0 } : { endpoints: [] }) };
        }
        expect(got).toEqual(want);
      });
    }
  }
});
