// The kernel's own trace in iptables mode (iptables-nft, the only backend here): a `-j TRACE`
// rule for the probe's packets at the top of raw PREROUTING and raw OUTPUT (kube-proxy writes no
// raw rules), and `xtables-monitor --trace` in the node's namespace prints every rule the packet
// then matched, in iptables-save syntax. The two rules are deleted afterwards.

import { writePrivateFileSync } from '../../util/private-files.js';
import type { HostExec } from '../../host/exec.js';
import { startKernelTraceTool } from './capture-process.js';
import type { KernelTraceSession, TraceMatch } from './kernel-trace-nft.js';
import { countPackets, firstPacketRules, type KernelTraceEvent } from './observed.js';

export const XT_TRACE_COMMENT = 'kdp-trace';
const CHAINS = ['PREROUTING', 'OUTPUT'] as const;

/** The rule (after `-I CHAIN 1` / `-D CHAIN`) that marks the probe's packets for tracing. */
export function xtTraceRule(m: TraceMatch): string[] {
  const v6 = m.family === 'IPv6' || (m.src?.includes(':') ?? false);
  const match = m.protocol === 'icmp'
    ? [...(m.src ? ['-s', m.src] : []),
      ...(v6 ? ['-p', 'ipv6-icmp', '--icmpv6-type', 'echo-request']
        : ['-p', 'icmp', '--icmp-type', 'echo-request'])]
    : ['-p', m.protocol, '--sport', String(m.sport ?? 0)];
  return [...match, '-m', 'comment', '--comment', XT_TRACE_COMMENT, '-j', 'TRACE'];
}

const TRACE = /^\s*TRACE: (\d+) ([0-9a-f]+) (\S+)(?:\s+(.*))?$/;
const PACKET = /^\s*PACKET: (\d+) ([0-9a-f]+) (.*)$/;

/** Parses `xtables-monitor --trace` output (PACKET and TRACE lines; others are skipped). */
export function parseXtTrace(text: string): KernelTraceEvent[] {
  const out: KernelTraceEvent[] = [];
  let lastPacket: { id: string; text: string } | undefined;
  for (const line of text.split('\n')) {
    const p = PACKET.exec(line);
    if (p) {
      lastPacket = { id: p[2]!, text: p[3]!.trim() };
      continue;
    }
    const m = TRACE.exec(line.trimEnd());
    if (!m) continue;
    const [, , id, head, ruleText] = m;
    const [table = '', chain = '', type = '', ...rest] = head!.split(':');
    const base = { id: id!, table, chain };
    if (lastPacket?.id === id) {
      out.push({ ...base, kind: 'packet', text: lastPacket.text });
      lastPacket = undefined;
    }
    if (type === 'rule') {
      const [handle = '', verdict = '', ...target] = rest;
      out.push({
        ...base, kind: 'rule', text: ruleBody(ruleText ?? '', chain),
        verdict: [xtVerdict(verdict), ...(target.length ? [target.join(':')] : [])].join(' '),
        ...(/^0x[0-9a-f]+$/i.test(handle) ? { handle: parseInt(handle, 16) } : {}),
      });
    } else if (type === 'policy') {
      out.push({ ...base, kind: 'policy', verdict: rest.join(':').toLowerCase() });
    } else if (type === 'return') {
      out.push({ ...base, kind: 'return', verdict: 'return' });
    }
  }
  return out;
}

/** The kernel's verdict codes where xtables-monitor prints them as numbers. */
const VERDICT_CODES: Record<string, string> = {
  '0x0': 'drop', '0x1': 'accept', '0xffffffff': 'continue', '0xfffffffe': 'break',
  '0xfffffffd': 'jump', '0xfffffffc': 'goto', '0xfffffffb': 'return',
};

function xtVerdict(v: string): string {
  return VERDICT_CODES[v.toLowerCase()] ?? v.toLowerCase();
}

/** `-4 -t nat -A CHAIN <args>` → `<args>` (as the simulation's rule text). */
function ruleBody(text: string, chain: string): string {
  const m = /^(?:-[46] )?(?:-t \S+ )?-A (\S+) (.*)$/.exec(text.trim());
  return m && m[1] === chain ? m[2]! : text.trim();
}

/** TRACE rules an interrupted run left behind (ours carry the comment; nothing else does). */
async function removeStale(exec: HostExec, tool: string, netns: string): Promise<void> {
  const { stdout } = await exec.run(tool, ['-w', '5', '-t', 'raw', '-S'], { netns });
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('-A ') || !line.includes(`--comment ${XT_TRACE_COMMENT} `)) continue;
    const args = line.slice(3).trim().split(/\s+/);
    await exec.run(tool, ['-w', '5', '-t', 'raw', '-D', ...args], { netns });
  }
}

export async function startXtTrace(
  exec: HostExec, node: { name: string; netns: string }, m: TraceMatch, file: string,
): Promise<KernelTraceSession> {
  const netns = node.netns;
  const v6 = m.family === 'IPv6' || (m.src?.includes(':') ?? false);
  const tool = v6 ? 'ip6tables' : 'iptables';
  const rule = xtTraceRule(m);
  const raw = (...args: string[]) =>
    exec.run(tool, ['-w', '5', '-t', 'raw', ...args, ...rule], { netns });
  return startKernelTraceTool({
    netns, file: 'xtables-monitor', args: ['--trace'],
    async setUp() {
      await removeStale(exec, tool, netns);
      for (const c of CHAINS) await raw('-I', c, '1');
    },
    async tearDown() {
      for (const c of CHAINS) await raw('-D', c).catch(() => undefined);
    },
    read(text) {
      writePrivateFileSync(file, text);
      const events = parseXtTrace(text);
      const own = (e: KernelTraceEvent) => (e.text ?? '').includes(`--comment ${XT_TRACE_COMMENT}`);
      return {
        node: node.name, netns, tool: 'xtables-monitor --trace', file,
        packets: countPackets(events), rules: firstPacketRules(events, own),
      };
    },
  });
}
