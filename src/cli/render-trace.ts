// Human-readable trace: numbered hops with the rule text and its origin, NAT steps highlighted,
// the destinations with their probabilities, and the verdict.

import type { LiveTrace } from '../trace/live/live-trace.js';
import type { TraceResult } from '../trace/result.js';
import { verdictLabel } from '../trace/world.js';

export function renderTrace(r: TraceResult, color: boolean): string {
  const hi = (s: string) => (color ? `\x1b[1;33m${s}\x1b[0m` : s);
  const p = r.packet;
  const lines: string[] = [`packet ${p.proto} ${p.src}:${p.sport} → ${p.dst}${p.proto === 'icmp' ? '' : `:${p.dport}`}`, ''];
  r.destinations.forEach((d, i) => {
    const pct = (d.probability * 100).toFixed(d.probability === 1 ? 0 : 2);
    lines.push(`branch ${i + 1}: ${verdictLabel(d.verdict, d.dropBy)} ${d.destination} (${pct}%)${d.masquerade ? `, source seen as ${d.sourceSeen}` : ''} — ${d.reached}`);
    d.hops.forEach((h, n) => {
      const where = `${h.where} ${h.stage}${h.rule ? ` #${h.rule}` : ''}`;
      const origin = h.origin?.servicePort ? `  [${h.origin.servicePort}${h.origin.endpoint ? ` → ${h.origin.endpoint}` : ''}]` : '';
      lines.push(`  ${String(n + 1).padStart(2)}. ${where}: ${h.text}${origin}`);
      if (h.nat) lines.push(`      ${hi(h.nat)}`);
    });
    lines.push('');
  });
  lines.push(`verdict: ${verdictLabel(r.verdict, r.dropBy)}; masquerade: ${r.masquerade ? 'yes' : 'no'}`);
  return `${lines.join('\n')}\n`;
}

/** `kdp trace --live`: what the kernel did, beside the simulated branch it took, then the
 *  interfaces with their pcap files, the rules each node's kernel matched, and the verdict. */
export function renderLive(l: LiveTrace, color: boolean): string {
  const bad = (s: string) => (color ? `\x1b[1;31m${s}\x1b[0m` : s);
  const good = (s: string) => (color ? `\x1b[1;32m${s}\x1b[0m` : s);
  const lines = ['', ...liveSummary(l), '', 'interfaces (pcap files, Wireshark reads them):'];
  l.observed.hops.forEach((h, i) => {
    const seen = h.error ? `capture failed: ${h.error}` : h.forward ?? 'probe not seen';
    const reply = h.reply ? `  ⟵ ${h.reply}` : '';
    const n = String(i + 1).padStart(2);
    lines.push(`  ${n}. ${h.label.padEnd(34)} ${seen}${reply}`, `      ${h.file}`);
  });
  for (const k of l.observed.kernel) {
    const cmp = l.comparison.rules.find((r) => r.node === k.node);
    lines.push('', `kernel trace on ${k.node} (${k.tool}, ${k.packets} packets traced): ${k.file}`);
    if (k.error) lines.push(`  ${bad(k.error)}`);
    for (const r of k.rules) lines.push(`  ${r.stage}: ${r.text}  (${r.verdict})`);
    for (const x of cmp?.onlySimulated ?? []) lines.push(`  ${bad(`- simulated only: ${x}`)}`);
    for (const x of cmp?.onlyKernel ?? []) lines.push(`  ${bad(`+ kernel only:    ${x}`)}`);
    if (cmp?.kernel.length && !cmp.onlySimulated.length && !cmp.onlyKernel.length) {
      lines.push(`  = ${cmp.kernel.length} kube-proxy rules, as simulated`);
    }
  }
  const bugs = l.comparison.bugs;
  lines.push('', bugs.length === 0 ? good('fidelity: the kernel agrees with the simulation')
    : bad(`fidelity: ${bugs.length} disagreement(s), each a fidelity bug:`));
  for (const b of bugs) {
    const where = `${b.aspect}${b.where ? ` at ${b.where}` : ''}`;
    lines.push(`  ✗ FIDELITY BUG (${where}): simulated ${b.simulated}; observed ${b.observed}`);
  }
  lines.push(`files: ${l.dir}`);
  return `${lines.join('\n')}\n`;
}

function liveSummary(l: LiveTrace): string[] {
  const o = l.observed;
  const p = l.probe;
  const answer = `${p.outcome}${p.responder ? ` from ${p.responder}` : ''}` +
    `${p.seenSource ? `, source seen ${p.seenSource}` : ''}`;
  const sim = l.comparison.branch;
  const simText = !sim ? 'no branch like it'
    : sim.verdict !== 'ACCEPT' ? `nowhere; verdict ${sim.verdict}`
      : `${sim.reached} at ${sim.destination} from ${sim.sourceSeen}; verdict ACCEPT`;
  return [
    `observed (live): ${answer}; round trip ${p.rttMs.toFixed(2)} ms` +
      `${p.error ? ` (${p.error})` : ''}`,
    `  reached:   ${o.reached ?? 'nowhere'}${o.destination ? ` at ${o.destination}` : ''}` +
      `${o.sourceSeen ? ` from ${o.sourceSeen}` : ''}; verdict ${o.verdict}`,
    `  simulated: ${simText}`,
  ];
}

/** The `live` object of `-o json` (kept in trace/live/live-json.ts, which the web UI shares). */
export { liveJson } from '../trace/live/live-json.js';
