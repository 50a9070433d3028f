// The NetworkPolicy stage of a trace: a node's `inet kdp-netpol` table (the text its policy
// controller last applied) runs in the node's forward hook after the mode's own FORWARD rules,
// as in the kernel. It sees the packet after kube-proxy's DNAT (prerouting), so ingress is
// judged on the endpoint pod and egress to a ClusterIP on the chosen endpoint.
//
// The verdict comes from walking the compiled table (nft-sim, strict: text it cannot read is an
// error, never a guess), so the trace agrees with what the kernel enforces. Hops name, for the
// source pod's egress and the destination pod's ingress on their own nodes, the policy and rule
// that allowed, the isolating policies of a default-deny drop, or that no policy selects the pod.

import { kdpError } from '../errors.js';
import { parseIsolationNote } from '../netpol/nftables.js';
import { parseNetpolNft, simulateForwardSteps, type NetpolTable, type SimStep } from '../netpol/nft-sim.js';
import type { NodeFilter } from './topology.js';
import { isRecording, type World } from './world.js';

export interface NetpolNodeView {
  readonly table: NetpolTable;
  /** Pod IP → `ns/name`, for the pods running on this node (their chains live here). */
  readonly localPods: ReadonlyMap<string, string>;
}

/** Parses a node's table text; KDP_TRACE naming the node when it is not the compiler's. */
export function netpolNodeView(node: string, text: string, localPods: ReadonlyMap<string, string>)
  : NetpolNodeView {
  try {
    return { table: parseNetpolNft(text), localPods };
  } catch (e) {
    throw kdpError('KDP_TRACE', `node ${node}: cannot read its kdp-netpol table: ${(e as Error).message}`);
  }
}

/** `filter` with the node's NetworkPolicy table in its FORWARD hook. */
export function withNetpol(filter: NodeFilter, view: NetpolNodeView): NodeFilter {
  return {
    mode: filter.mode,
    ...(filter.isLocal ? { isLocal: (ip: string) => filter.isLocal!(ip) } : {}),
    runHook(hook, worlds, env) {
      const out = filter.runHook(hook, worlds, env);
      if (hook !== 'FORWARD') return out;
      for (const w of out) {
        if (w.verdict === undefined || w.verdict === 'ACCEPT') judge(view, w, env.where);
      }
      return out;
    },
  };
}

const DIRECTION = /^(egress|ingress)-(.+)$/;

function judge(view: NetpolNodeView, w: World, where: string): void {
  const p = w.pkt;
  const { result, steps } = simulateForwardSteps(view.table, {
    saddr: p.src, daddr: p.dst, protocol: p.proto, dport: p.dport,
  });
  const rec = isRecording(w);
  const src = view.localPods.get(p.src);
  const dst = view.localPods.get(p.dst);
  const egress = steps.find((s) => s.map.startsWith('egress-'));
  const ingress = steps.find((s) => s.map.startsWith('ingress-'));
  const denied = result.verdict === 'drop';
  if (rec) {
    if (src && !egress) w.hops.push(unselected(where, 'egress', src));
    if (egress) w.hops.push(stepHop(where, egress));
    // An egress drop ends the hook: the destination's ingress is never looked at.
    if (dst && !ingress && !(denied && egress?.outcome === 'drop')) {
      w.hops.push(unselected(where, 'ingress', dst));
    }
    if (ingress) w.hops.push(stepHop(where, ingress));
  }
  if (denied) {
    const decided = steps.find((s) => s.outcome === 'drop');
    const note = decided && parseIsolationNote(decided.by);
    w.verdict = 'DROP';
    w.dropBy = note?.policies.length ? `policy ${note.policies.join(', ')}` : 'policy';
  }
}

function unselected(where: string, dir: 'egress' | 'ingress', pod: string) {
  return { where, stage: `netpol ${dir}`, text: `${dir} of ${pod}: no policy selects this pod: allowed` };
}

function stepHop(where: string, s: SimStep) {
  const [, dir = '', pod = s.chain] = DIRECTION.exec(s.chain) ?? [];
  const base = { where, stage: `netpol ${dir}`, chain: s.chain, ...(s.rule ? { rule: s.rule } : {}) };
  if (s.outcome === 'drop') {
    const note = parseIsolationNote(s.by);
    const by = note?.policies.length ? ` by ${note.policies.join(', ')}` : '';
    return { ...base, text: `${dir} of ${pod}: denied: isolated for ${dir}${by} and no ${dir} rule ` +
      `allows it` };
  }
  if (s.by === "from the pod's node") return { ...base, text: `${dir} of ${pod}: from the pod's node: allowed` };
  const rule = /^(\S+) (ingress|egress) rule (\d+)$/.exec(s.by);
  return { ...base, text: rule ? `${dir} of ${pod}: allowed by policy ${rule[1]} ${rule[2]} rule ${rule[3]}`
    : `${dir} of ${pod}: allowed (${s.by})` };
}
