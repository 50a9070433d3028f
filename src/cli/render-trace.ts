// Human-readable trace: numbered hops with the rule text and its origin, NAT steps highlighted,
// the destinations with their probabilities, and the verdict.

import type { TraceResult } from '../trace/result.js';

export function renderTrace(r: TraceResult, color: boolean): string {
  const hi = (s: string) => (color ? `\x1b[1;33m${s}\x1b[0m` : s);
  const p = r.packet;
  const lines: string[] = [`packet ${p.proto} ${p.src}:${p.sport} → ${p.dst}${p.proto === 'icmp' ? '' : `:${p.dport}`}`, ''];
  r.destinations.forEach((d, i) => {
    const pct = (d.probability * 100).toFixed(d.probability === 1 ? 0 : 2);
    lines.push(`branch ${i + 1}: ${d.verdict} ${d.destination} (${pct}%)${d.masquerade ? `, source seen as ${d.sourceSeen}` : ''} — ${d.reached}`);
    d.hops.forEach((h, n) => {
      const where = `${h.where} ${h.stage}${h.rule ? ` #${h.rule}` : ''}`;
      const origin = h.origin?.servicePort ? `  [${h.origin.servicePort}${h.origin.endpoint ? ` → ${h.origin.endpoint}` : ''}]` : '';
      lines.push(`  ${String(n + 1).padStart(2)}. ${where}: ${h.text}${origin}`);
      if (h.nat) lines.push(`      ${hi(h.nat)}`);
    });
    lines.push('');
  });
  lines.push(`verdict: ${r.verdict}; masquerade: ${r.masquerade ? 'yes' : 'no'}`);
  return `${lines.join('\n')}\n`;
}
