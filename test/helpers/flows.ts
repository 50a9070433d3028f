// Packet-flow cases of the golden scenarios (rules/NN-x/flows.yaml) and how a trace answers them.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYAML } from 'yaml';
import { parseHostPort, parseProtocol } from '../../src/trace/packet.js';
import type { TraceResult } from '../../src/trace/result.js';

export interface FlowCase {
  readonly name: string;
  readonly source: string;
  readonly destination: string;
  readonly protocol: string;
  /** DNAT (to `endpoints`), NONE (untouched), ACCEPT (untouched, accepted by a rule), DROP or
   *  REJECT. */
  readonly verdict: 'DNAT' | 'NONE' | 'ACCEPT' | 'DROP' | 'REJECT';
  /** Every possible destination; or only their number (`endpointCount`) for large tables. */
  readonly endpoints?: readonly string[];
  readonly endpointCount?: number;
  readonly masquerade: boolean;
  /** Where a mode behaves differently by design (reference §7.1), its own expectation. */
  readonly modes?: Readonly<Record<string, Partial<FlowOutcome>>>;
}

/** What the case expects, in the terms `flowOutcome` produces. */
export function flowExpectation(f: FlowCase, mode?: string): FlowOutcome {
  const o = (mode && f.modes?.[mode]) || undefined;
  if (o) return flowExpectation({ ...f, ...o, modes: undefined } as FlowCase);
  return {
    verdict: f.verdict,
    ...(f.endpointCount !== undefined ? { endpointCount: f.endpointCount } : { endpoints: [...(f.endpoints ?? [])].sort() }),
    masquerade: f.masquerade,
  };
}

export interface FlowOutcome {
  readonly verdict: FlowCase['verdict'];
  readonly endpoints?: readonly string[];
  readonly endpointCount?: number;
  readonly masquerade: boolean;
}

export function loadFlows(dir: string): FlowCase[] {
  const file = join(dir, 'flows.yaml');
  if (!existsSync(file)) return [];
  return ((parseYAML(readFileSync(file, 'utf8')) as { flows?: FlowCase[] }).flows ?? []);
}

export function flowPacket(f: FlowCase) {
  const dst = parseHostPort(f.destination, 'destination');
  return { src: parseHostPort(f.source, 'source').ip, dst: dst.ip, dport: dst.port, proto: parseProtocol(f.protocol) };
}

/** The trace reduced to the flow case's terms, for a whole-object comparison. */
export function flowOutcome(f: FlowCase, r: TraceResult): FlowOutcome {
  const count = (eps: readonly string[]) =>
    f.endpointCount !== undefined ? { endpointCount: eps.length } : { endpoints: eps };
  if (r.verdict !== 'ACCEPT') return { verdict: r.verdict, ...count([]), masquerade: false };
  const untouched = r.destinations.length === 1 && r.destinations[0]!.destination === normalise(f.destination);
  if (untouched) {
    // Untouched traffic for the node itself is ACCEPT (delivered locally); elsewhere NONE.
    const local = r.destinations[0]!.reached.startsWith('node ');
    return { verdict: local ? 'ACCEPT' : 'NONE', ...count([]), masquerade: r.masquerade };
  }
  return { verdict: 'DNAT', ...count(r.destinations.map((d) => d.destination).sort()), masquerade: r.masquerade };
}

function normalise(hostPort: string): string {
  const hp = parseHostPort(hostPort, 'destination');
  return hp.ip.includes(':') ? `[${hp.ip}]:${hp.port}` : `${hp.ip}:${hp.port}`;
}
