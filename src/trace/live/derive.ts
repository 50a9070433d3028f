// More flows for the fidelity check at no extra lab cost: each scenario flow's destination sent
// from the other kinds of sender (a local pod, the node itself, an outside client). These need
// no written expectation: the simulation is the expectation and the kernel the judge.

import { parseHostPort } from '../packet.js';
import type { FidelityFlow, FidelityScenario } from './fidelity.js';
import { firstAddress, inCIDR, isV6 } from './lab-plan.js';

const OUTSIDE = { v4: '203.0.113.99', v6: '2001:db8::99' } as const;

/** A local pod address: one the scenario's flows already send from, else gateway + 4. */
function localPod(s: FidelityScenario, v6: boolean): string | undefined {
  const cidrs = s.podCIDRs.filter((c) => isV6(c) === v6);
  const used = s.flows.map((f) => parseHostPort(f.source, 'source').ip)
    .find((ip) => cidrs.some((c) => inCIDR(ip, c)) && !cidrs.map(firstAddress).includes(ip));
  if (used || cidrs.length === 0) return used;
  const gw = firstAddress(cidrs[0]!);
  return v6 ? gw.replace(/[0-9a-f]+$/, (h) => (parseInt(h, 16) + 4).toString(16))
    : gw.replace(/\d+$/, (d) => String(Number(d) + 4));
}

export function deriveFlows(s: FidelityScenario): FidelityFlow[] {
  const keyOf = (src: string, f: FidelityFlow) =>
    `${src}|${f.destination}|${f.protocol.toUpperCase()}`;
  const seen = new Set(s.flows.map((f) => keyOf(parseHostPort(f.source, 'source').ip, f)));
  const out: FidelityFlow[] = [];
  for (const f of s.flows) {
    const proto = f.protocol.toUpperCase();
    if (proto !== 'TCP' && proto !== 'UDP') continue;
    const dst = parseHostPort(f.destination, 'destination').ip;
    // Only the node itself can send to its loopback.
    if (dst === '::1' || dst.startsWith('127.')) continue;
    const v6 = isV6(dst);
    const senders: Array<[string, string | undefined]> = [
      ['a local pod', localPod(s, v6)],
      ['the node', s.nodeIPs.find((ip) => isV6(ip) === v6)],
      ['an outside client', v6 ? OUTSIDE.v6 : OUTSIDE.v4],
    ];
    for (const [who, source] of senders) {
      if (!source) continue;
      const key = keyOf(source, f);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        name: `derived: ${who} (${source}) to ${f.destination}/${proto}`,
        source, destination: f.destination, protocol: proto,
      });
    }
  }
  return out;
}
