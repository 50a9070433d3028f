// Text renderings of the three views (semantic, rules, behaviour) and their JSON forms.

import type { BehaviourResult, FlowDifference } from './behaviour.js';
import { changeLine } from './semantic.js';
import type { SemanticChange } from './types.js';

const COLOUR = { red: '\x1b[31m', green: '\x1b[32m', cyan: '\x1b[36m', reset: '\x1b[0m' };

export function renderSemantic(changes: readonly SemanticChange[], textDiffers: boolean): string {
  if (changes.length === 0) {
    return textDiffers
      ? 'no semantic difference (the rules differ only in comments or order; see --rules)\n'
      : 'no difference\n';
  }
  return `${changes.map(changeLine).join('\n')}\n`;
}

export function renderUnified(lines: readonly string[], colour: boolean): string {
  if (lines.length === 0) return '';
  const paint = (l: string) => {
    if (!colour) return l;
    const c = l.startsWith('@@') ? COLOUR.cyan : l.startsWith('-') ? COLOUR.red
      : l.startsWith('+') ? COLOUR.green : '';
    return c ? `${c}${l}${COLOUR.reset}` : l;
  };
  return `${lines.map(paint).join('\n')}\n`;
}

const KIND = { cluster: 'ClusterIP', external: 'external IP', loadbalancer: 'LoadBalancer IP',
  nodeport: 'NodePort' } as const;

export function flowLabel(d: FlowDifference): string {
  const p = d.probe;
  const dst = p.dst.includes(':') ? `[${p.dst}]` : p.dst;
  return `${p.sourceKind} ${p.source} → ${KIND[p.target]} ${dst}:${p.dport}/${p.proto}`;
}

export function renderBehaviour(r: BehaviourResult, textDiffers: boolean): string {
  const out: string[] = [];
  for (const d of r.differences) {
    out.push(flowLabel(d), `  before: ${d.before || 'nothing'}`,
      `  after:  ${d.after || 'nothing'}`);
  }
  for (const n of r.notes) out.push(`note: ${n}`);
  if (r.differences.length === 0) {
    out.push(textDiffers
      ? `the tables differ in text but not in behaviour (${r.probes} probes)`
      : `no difference (${r.probes} probes)`);
  } else {
    out.push(`${r.differences.length} of ${r.probes} probes behave differently`);
  }
  return `${out.join('\n')}\n`;
}

export function behaviourJson(r: BehaviourResult, textDiffers: boolean): Record<string, unknown> {
  return {
    view: 'behaviour', textDiffers, probes: r.probes, notes: r.notes,
    differences: r.differences.map((d) => ({ flow: flowLabel(d), ...d })),
  };
}
