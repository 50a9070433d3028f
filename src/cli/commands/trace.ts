// `kdp trace`: where does this packet go, and what is done to it on the way?

import { kdpError } from '../../errors.js';
import { parseHostPort, parseProtocol } from '../../trace/packet.js';
import { traceOffline, type TraceMode } from '../../trace/offline.js';
import type { TraceResult } from '../../trace/result.js';
import type { Command } from '../command.js';
import { readInput } from '../read-input.js';
import { parseMode } from './rules-compile.js';
import { renderTrace } from '../render-trace.js';

export const traceCommand: Command = {
  name: 'trace',
  summary: 'trace a packet hop by hop through routes and the compiled rules',
  args: 'SRC DST[:PORT]',
  flags: [
    { name: 'rules', type: 'string', help: 'trace this rule dump instead of a cluster (iptables-save, nft list ruleset / -j, kdp rules compile output; - for stdin)' },
    { name: 'mode', type: 'string', help: 'iptables | nftables | ipvs (format of --rules)' },
    { name: 'node-ip', type: 'strings', help: 'with --rules: the node\'s local addresses (repeatable)' },
    { name: 'pod-cidr', type: 'strings', help: 'with --rules: pod CIDRs of this node' },
    { name: 'proto', type: 'string', default: 'tcp', help: 'tcp | udp | sctp | icmp' },
    { name: 'sport', type: 'number', help: 'source port (default 40000)' },
    { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' },
  ],
  async run(args, io) {
    if (args.positionals.length !== 2) throw kdpError('KDP_TRACE', 'usage: kdp trace SRC DST[:PORT]');
    const [srcText, dstText] = args.positionals as [string, string];
    const proto = parseProtocol(args.flags.proto as string);
    if (!args.flags.rules) {
      throw kdpError('KDP_NOT_RUNNING', 'tracing a running cluster needs `kdp up`; to trace a dump, pass --rules FILE');
    }
    const mode = parseMode(args.flags.mode) ?? 'iptables';
    const src = parseHostPort(srcText, 'SRC');
    const dst = parseHostPort(dstText, 'DST');
    const result = traceOffline({
      rules: await readInput(args.flags.rules as string, '--rules'),
      mode: mode as TraceMode,
      nodeIPs: (args.flags['node-ip'] as string[] | undefined) ?? [],
      podCIDRs: args.flags['pod-cidr'] as string[] | undefined,
      src: src.ip, dst: dst.ip, dport: dst.port, proto,
      sport: args.flags.sport as number | undefined,
    });
    io.out(args.flags.output === 'json' ? `${JSON.stringify(traceJson(result), null, 2)}\n` : renderTrace(result, io.isTTY));
    return result.verdict === 'ACCEPT' ? 0 : 1;
  },
};

export function traceJson(r: TraceResult): Record<string, unknown> {
  return {
    packet: r.packet,
    verdict: r.verdict,
    destinations: r.destinations.map((d) => ({
      destination: d.destination, probability: round(d.probability), masquerade: d.masquerade,
      sourceSeen: d.sourceSeen, verdict: d.verdict, reached: d.reached, hops: d.hops,
    })),
    masquerade: r.masquerade,
    hops: r.hops,
  };
}

function round(p: number): number {
  return Math.round(p * 1e10) / 1e10;
}
