// The packet-flow cases of every scenario (rules/*/flows.yaml) hold on its iptables golden,
// traced with upstream's packet-flow semantics.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYAML } from 'yaml';
import { tracePacket } from '../helpers/iptables-flow-tracer.js';
import { goldenPath, listScenarios, loadScenario } from '../helpers/scenarios.js';

interface Flow {
  name: string;
  source: string;
  destination: string;
  protocol: string;
  verdict: 'DNAT' | 'ACCEPT' | 'DROP' | 'REJECT' | 'NONE';
  endpoints?: string[];
  endpointCount?: number;
  masquerade: boolean;
}

function splitHostPort(s: string): [string, string] {
  const i = s.lastIndexOf(':');
  const host = s.slice(0, i);
  return [host.startsWith('[') ? host.slice(1, -1) : host, s.slice(i + 1)];
}

describe('iptables packet flows', () => {
  for (const name of listScenarios()) {
    const s = loadScenario(name);
    const file = join(s.dir, 'flows.yaml');
    if (!existsSync(file)) continue;
    const flows = (parseYAML(readFileSync(file, 'utf8')) as { flows: Flow[] }).flows;
    const golden = readFileSync(goldenPath(s, 'iptables'), 'utf8');
    for (const f of flows) {
      it(`${name}: ${f.name}`, () => {
        const [ip, port] = splitHostPort(f.destination);
        const r = tracePacket(golden, s.node.ips, f.source, f.protocol, ip, port);
        if (f.verdict === 'DNAT') {
          if (f.endpointCount !== undefined) expect(r.outputs).toHaveLength(f.endpointCount);
          else expect([...r.outputs].sort()).toEqual([...(f.endpoints ?? [])].sort());
        } else {
          expect(r.outputs).toEqual(f.verdict === 'NONE' ? [] : [f.verdict]);
        }
        expect(r.masquerade).toBe(f.masquerade);
      });
    }
  }
});
