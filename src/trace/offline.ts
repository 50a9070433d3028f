// Tracing a rule dump with no cluster: one node whose local addresses are the given node IPs.
// Used by `kdp trace --rules DUMP` and by the golden packet-flow tests.

import { isKdpError, kdpError } from '../errors.js';
import type { RuleOrigin } from '../proxy/backend.js';
import { checkRuleText, proxyMode, type ProxyMode } from '../proxy/registry.js';
import { DEFAULT_SPORT, type Packet, type TraceProtocol } from './packet.js';
import { foldArrivals, type TraceResult } from './result.js';
import type { NodeFilter, Topology } from './topology.js';
import { walk } from './walk.js';

/** A dump is traced by its proxy mode's filter (the mode's registry entry). */
export type TraceMode = ProxyMode;

export interface OfflineTraceInput {
  readonly rules: string;
  readonly mode: TraceMode;
  readonly nodeIPs: readonly string[];
  readonly src: string;
  readonly dst: string;
  readonly dport?: number;
  readonly proto: TraceProtocol;
  readonly sport?: number;
  /** Pod CIDRs of this node, when known (a packet to them is delivered to a local pod). */
  readonly podCIDRs?: readonly string[];
  readonly origins?: ReadonlyMap<string, RuleOrigin>;
}

export function buildFilter(mode: TraceMode, rules: string, origins?: ReadonlyMap<string, RuleOrigin>): NodeFilter {
  return proxyMode(mode).traceFilter(rules, origins);
}

/**
 * Checks a dump read from a file (`kdp trace --rules`) as the kernel's tools would before it is
 * traced: a table the kernel refuses (a jump loop, a jump to a missing chain, a bad DNAT
 * address, a truncated or empty file) is KDP_PARSE naming `label` and the line, never a trace.
 */
export function checkDump(mode: TraceMode, text: string, label: string): void {
  try {
    checkRuleText(mode, text);
  } catch (e) {
    if (isKdpError(e, 'KDP_PARSE')) {
      throw kdpError('KDP_PARSE', `${label}: ${e.message}`, e.details);
    }
    throw e;
  }
}

export function traceOffline(input: OfflineTraceInput): TraceResult {
  if (input.proto !== 'icmp' && input.dport === undefined) {
    throw kdpError('KDP_TRACE', `destination ${input.dst} needs a port for ${input.proto}`);
  }
  const filter = buildFilter(input.mode, input.rules, input.origins);
  const topo: Topology = {
    nodes: [{
      name: 'node', nodeIPs: input.nodeIPs, podCIDRs: input.podCIDRs ?? [], bridge: 'cni0', gatewayIPs: [],
      underlayIface: 'eth0', filter,
    }],
    pods: [],
  };
  const pkt: Packet = {
    src: input.src, dst: input.dst, proto: input.proto, sport: input.sport ?? DEFAULT_SPORT,
    dport: input.proto === 'icmp' ? 0 : input.dport!,
  };
  const entry = input.nodeIPs.includes(input.src)
    ? { kind: 'node' as const, node: 'node' }
    : { kind: 'external' as const, node: 'node' };
  return foldArrivals(pkt, walk(topo, entry, pkt));
}
