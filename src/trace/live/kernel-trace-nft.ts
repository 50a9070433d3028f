// The kernel's own trace in nftables mode: a kdp-owned table `inet kdp-trace` sets
// `meta nftrace set 1` on the probe's packets at prerouting/output with priority raw-1 (-301),
// before any other table, and `nft -a monitor trace` in the node's namespace reports every rule
// the packet then matched. kube-proxy's table is never touched; the table goes afterwards.
//
// The source port alone does not follow the probe across nodes: kube-proxy's `masquerade
// fully-random` (node → Service, hairpin) gives it a new source port before it leaves the node,
// so the next node's match by port saw nothing. Where the probe first enters a node's hooks, the
// table therefore also tags it with a DSCP value nothing else in a kdp cluster uses (NAT keeps the
// IP header's DS field, kube-proxy never matches it), and every node traces the tagged packets.

import { writePrivateFileSync } from '../../util/private-files.js';
import type { HostExec } from '../../host/exec.js';
import { startKernelTraceTool } from './capture-process.js';
import {
  countPackets, firstPacketRules, type KernelTrace, type KernelTraceEvent,
} from './observed.js';

export const NFT_TRACE_TABLE = 'kdp-trace';

/** Which packets to trace: the probe's forward direction. */
export interface TraceMatch {
  readonly protocol: 'tcp' | 'udp' | 'icmp';
  /** tcp/udp: the probe's source port (answers carry it as destination port instead). */
  readonly sport?: number;
  /** icmp: the sender's address (echo requests from it are traced). */
  readonly src?: string;
  readonly family?: 'IPv4' | 'IPv6';
}

/** The nft match for the probe's packets. */
export function nftMatch(m: TraceMatch): string {
  if (m.protocol === 'icmp') {
    const v6 = m.src?.includes(':');
    const from = m.src ? `${v6 ? 'ip6' : 'ip'} saddr ${m.src} ` : '';
    return `${from}${v6 ? 'icmpv6 type echo-request' : 'icmp type echo-request'}`;
  }
  return `meta l4proto ${m.protocol} th sport ${m.sport ?? 0}`;
}

/** The DSCP value (6 bits, unassigned by RFC 8436's registry) that marks a traced probe. */
export const PROBE_DSCP = '0x2b';

/** One transaction: (re)creates `inet kdp-trace` with its two tracing chains. */
export function nftTraceRuleset(m: TraceMatch): string {
  const match = nftMatch(m);
  const l4 = m.protocol === 'icmp' ? '' : ` meta l4proto ${m.protocol}`;
  const rules = [
    `${match} meta nftrace set 1`,
    // Tag (the probe keeps its DS field through every NAT) and trace the tagged packets: rules
    // are evaluated in order, so a probe tagged here is also traced by the next rules.
    ...(['ip', 'ip6'] as const).map((f) => `${match} ${f} dscp set ${PROBE_DSCP}`),
    ...(['ip', 'ip6'] as const).map((f) => `${f} dscp ${PROBE_DSCP}${l4} meta nftrace set 1`),
  ].join('; ');
  return [
    `add table inet ${NFT_TRACE_TABLE}`,
    `delete table inet ${NFT_TRACE_TABLE}`,
    `table inet ${NFT_TRACE_TABLE} {`,
    `  chain prerouting { type filter hook prerouting priority -301; policy accept; ${rules}; }`,
    `  chain output { type filter hook output priority -301; policy accept; ${rules}; }`,
    '}',
    '',
  ].join('\n');
}

const LINE =
  /^trace id ([0-9a-f]+) (\S+) (\S+) (\S+) (packet:|rule|policy|verdict|unknown)\s?(.*)$/;
const RULE = /^(.*?)(?: # handle (\d+))? \(verdict ([^)]*)\)\s*$/;

/** Parses `nft [-a] monitor trace` output; lines of other kinds are skipped. */
export function parseNftTrace(text: string): KernelTraceEvent[] {
  const out: KernelTraceEvent[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line.trimEnd());
    if (!m) continue;
    const [, id, family, tableName, chain, kindWord, rest = ''] = m;
    const table = `${family} ${tableName}`;
    const base = { id: id!, table, chain: chain! };
    if (kindWord === 'packet:') out.push({ ...base, kind: 'packet', text: rest.trim() });
    else if (kindWord === 'rule') {
      const r = RULE.exec(rest);
      out.push({
        ...base, kind: 'rule', text: (r ? r[1]! : rest).trim(),
        ...(r?.[2] ? { handle: Number(r[2]) } : {}), verdict: (r?.[3] ?? '').trim(),
      });
    } else if (kindWord === 'policy') out.push({ ...base, kind: 'policy', verdict: rest.trim() });
    else if (kindWord === 'verdict') {
      const v = rest.trim();
      out.push({ ...base, kind: v === 'return' ? 'return' : 'verdict', verdict: v });
    }
  }
  return out;
}

export interface KernelTraceSession {
  /** Stops tracing, removes the tracing rules, and returns what the kernel reported. */
  stop(): Promise<KernelTrace>;
}

export async function startNftTrace(
  exec: HostExec, node: { name: string; netns: string }, m: TraceMatch, file: string,
): Promise<KernelTraceSession> {
  const netns = node.netns;
  return startKernelTraceTool({
    netns, file: 'nft', args: ['-a', 'monitor', 'trace'],
    async setUp() {
      await exec.run('nft', ['-f', '-'], { netns, input: nftTraceRuleset(m) });
    },
    tearDown: () => exec.run('nft', ['delete', 'table', 'inet', NFT_TRACE_TABLE], { netns })
      .then(() => undefined, () => undefined),
    read(text) {
      writePrivateFileSync(file, text);
      const events = parseNftTrace(text);
      const own = (e: KernelTraceEvent) => e.table === `inet ${NFT_TRACE_TABLE}`;
      return {
        node: node.name, netns, tool: 'nft monitor trace', file,
        packets: countPackets(events), rules: firstPacketRules(events, own),
      };
    },
  });
}
