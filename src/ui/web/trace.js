// The trace view: pick a source and a destination, and see the packet's path as the tracer
// walks it — the same JSON `kdp trace -o json` prints, from the UI endpoint `/ui/api/trace`.
// Hops are drawn in order, grouped by where they happen (node, pod); a NAT step is
// highlighted; every load-balancing branch is drawn with its probability.
// In netns mode the `live` toggle also sends the probe for real (`kdp trace --live`, the same
// JSON with `live` beside it): the interfaces it crossed and the rules each node's kernel
// matched are drawn beside the simulation, the branch the kernel took is marked, and every
// disagreement is marked as a fidelity bug. A virtual cluster has no kernel: the toggle is off.

import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { getJSON } from './api.js';
import { byName, nodeIPs, nsName } from './k8s.js';
import { href } from './router.js';

const pct = (p) => `${Math.round(p * 1000) / 10}%`;

function Hop({ hop, index }) {
  return html`<li class=${`hop${hop.nat ? ' nat' : ''}`} data-stage=${hop.stage}
    data-chain=${hop.chain ?? ''} data-rule=${hop.rule ?? ''}>
    <span class="hop-n">${index + 1}</span>
    <span class="hop-stage">${hop.stage}${hop.chain && !hop.stage.endsWith(hop.chain)
      ? ` ${hop.chain}` : ''}${hop.rule ? ` #${hop.rule}` : ''}</span>
    <code class="hop-text">${hop.text}</code>
    ${hop.origin ? html`<span class="hop-origin">${hop.origin.servicePort ?? ''}${hop.origin.endpoint ? ` → ${hop.origin.endpoint}` : ''}</span>` : ''}
    ${hop.nat ? html`<span class="hop-nat">NAT ${hop.nat}</span>` : ''}
  </li>`;
}

/** Consecutive hops at the same place, drawn as one box. */
function groups(hops) {
  const out = [];
  hops.forEach((h, i) => {
    const last = out[out.length - 1];
    if (last && last.where === h.where) last.hops.push([h, i]);
    else out.push({ where: h.where, hops: [[h, i]] });
  });
  return out;
}

function Branch({ d, index, taken }) {
  return html`<section class=${`branch ${d.verdict === 'ACCEPT' ? 'accept' : 'refused'}${taken ? ' taken' : ''}`}
    data-branch=${index} aria-label=${`branch ${index + 1}: ${d.destination}`}>
    <header>
      <span class="prob">${pct(d.probability)}</span>
      ${taken ? html`<span class="badge ok observed-here" title="the live probe took this branch">observed</span>` : ''}
      <b>${d.destination}</b> <span class=${`badge ${d.verdict === 'ACCEPT' ? 'ok' : 'bad'}`}>${d.verdict}</span>
      <span>reached ${d.reached}</span>
      ${d.masquerade ? html`<span class="badge warn">masqueraded: source seen ${d.sourceSeen}</span>` : ''}
    </header>
    ${groups(d.hops).map((g) => html`<div class="where"><h4>${g.where}</h4>
      <ol class="hops">${g.hops.map(([h, i]) => html`<${Hop} hop=${h} index=${i} />`)}</ol></div>`)}
  </section>`;
}

const bugText = (b) => `${b.aspect}${b.where ? ` at ${b.where}` : ''}: simulated ${b.simulated}; observed ${b.observed}`;

/** What the kernel did with the probe, beside the simulation; disagreements marked. */
export function LiveResult({ live }) {
  const o = live.observed;
  const p = live.probe;
  const pathBugs = new Set(live.fidelity.filter((b) => b.aspect === 'path').map((b) => b.where));
  return html`<section class=${`live-result ${live.agrees ? 'agrees' : 'disagrees'}`} aria-label="observed (live)">
    <h3>observed <span class=${`badge live-verdict ${live.agrees ? 'ok' : 'bad'}`}>${live.agrees
      ? 'the kernel agrees' : `${live.fidelity.length} disagreement${live.fidelity.length === 1 ? '' : 's'}`}</span></h3>
    <p class="live-summary">probe ${p.outcome}${p.responder ? ` from ${p.responder}` : ''}${' · '}
      reached <b class="obs-reached">${o.reached ?? 'nowhere'}</b>${o.destination ? ` at ${o.destination}` : ''}
      ${o.sourceSeen ? ` from ${o.sourceSeen}` : ''}${' · '}verdict <span class=${`badge obs-verdict ${o.verdict === 'ACCEPT' ? 'ok' : 'bad'}`}>${o.verdict}</span>
      ${' · '}round trip ${p.rttMs.toFixed(2)} ms</p>
    ${live.fidelity.length ? html`<ul class="fidelity">${live.fidelity.map((b) => html`<li class="fidelity-bug"
      data-aspect=${b.aspect} role="alert">✗ ${bugText(b)}</li>`)}</ul>` : ''}
    <h4>interfaces crossed</h4>
    <ol class="obs-hops">${o.hops.map((h) => html`<li class=${`obs-hop${h.forward ? ' seen' : ' unseen'}${pathBugs.has(h.label) ? ' disagree' : ''}`}
      data-label=${h.label}>
      <span class="obs-label">${h.label}</span>
      <code class="obs-forward">${h.error ? `capture failed: ${h.error}` : h.forward ?? 'probe not seen'}</code>
      ${h.reply ? html`<code class="obs-reply">⟵ ${h.reply}</code>` : ''}</li>`)}</ol>
    ${o.kernel.map((k) => {
      const cmp = live.rules.find((r) => r.node === k.node);
      return html`<div class="kernel" data-node=${k.node}><h4>${k.node}: ${k.tool}, ${k.packets} packet${k.packets === 1 ? '' : 's'} traced</h4>
        ${k.error ? html`<p class="error">${k.error}</p>` : ''}
        <ol class="kernel-rules">${k.rules.map((r) => html`<li><span class="hop-stage">${r.stage}</span> <code>${r.text}</code> (${r.verdict})</li>`)}</ol>
        ${(cmp?.onlySimulated ?? []).map((x) => html`<p class="rule-diff disagree">− simulated only: <code>${x}</code></p>`)}
        ${(cmp?.onlyKernel ?? []).map((x) => html`<p class="rule-diff disagree">+ kernel only: <code>${x}</code></p>`)}
        ${cmp?.kernel.length && !cmp.onlySimulated.length && !cmp.onlyKernel.length
          ? html`<p class="muted">= ${cmp.kernel.length} kube-proxy rules, as simulated</p>` : ''}
      </div>`;
    })}
    <p class="muted">pcap files and kernel traces: <code>${live.dir}</code></p>
  </section>`;
}

export function TraceResult({ t }) {
  const nat = t.natFree === undefined ? 'not applicable (pod to pod only)' : t.natFree ? 'yes' : 'no';
  return html`<div class="trace-result">
    <p class="summary"><b>${t.source}</b> → <b>${t.target}</b>${t.dns ? ` (DNS ${JSON.stringify(t.dns)})` : ''}
      ${' · '}${t.packet.proto} ${t.packet.src}:${t.packet.sport} → ${t.packet.dst}${t.packet.dport ? `:${t.packet.dport}` : ''}
      ${' · '}verdict <span class=${`badge verdict ${t.verdict === 'ACCEPT' ? 'ok' : 'bad'}`}>${t.verdict}</span>
      ${' · '}NAT-free <span class=${`badge nat-free ${t.natFree ? 'ok' : t.natFree === false ? 'bad' : ''}`}>${nat}</span>
      ${t.masquerade ? html`${' · '}<span class="badge warn">masquerade</span>` : ''}</p>
    ${t.destinations.length > 1 ? html`<p class="lb">load-balanced over ${t.destinations.length} branches:${' '}
      ${t.destinations.map((d) => `${d.destination} ${pct(d.probability)}`).join(' · ')}</p>` : ''}
    <div class=${t.live ? 'trace-live' : ''}>
      <div class="branches">${t.destinations.map((d, i) => html`<${Branch} d=${d} index=${i}
        taken=${t.live?.simulatedBranch?.destination === d.destination && t.live?.simulatedBranch?.reached === d.reached} />`)}</div>
      ${t.live ? html`<${LiveResult} live=${t.live} />` : ''}
    </div>
  </div>`;
}

/** The live toggle's state: usable only on a netns cluster this API server may probe. */
function liveAvailability(cluster) {
  if (!cluster) return { ok: false, why: 'reading the cluster…' };
  if (cluster.mode !== 'netns') {
    return { ok: false, why: 'Live tracing sends a real probe through the kernel: it needs a netns cluster ' +
      '(sudo kdp up). This cluster is virtual, so only the simulation is shown.' };
  }
  if (cluster.live && !cluster.live.available) return { ok: false, why: cluster.live.reason };
  return { ok: true, why: 'also send the packet for real (kdp trace --live): capture it on every interface, ' +
    'trace it in each node\'s kernel, and compare with the simulation' };
}

export function Trace({ store, route, cluster }) {
  const { src = '', dst = '', proto = 'tcp' } = route.params;
  const live = route.params.live === '1';
  const [form, setForm] = useState({ src, dst, proto, live });
  const [result, setResult] = useState({ loading: false });
  const avail = liveAvailability(cluster);
  useEffect(() => setForm({ src, dst, proto, live }), [src, dst, proto, live]);
  useEffect(() => {
    if (!src || !dst) return setResult({ loading: false });
    const ab = new AbortController();
    setResult({ loading: true });
    const q = new URLSearchParams({ src, dst, proto, ...(live ? { live: '1' } : {}) });
    getJSON(`/ui/api/trace?${q}`, ab.signal).then((t) => setResult({ t }),
      (e) => !ab.signal.aborted && setResult({ error: e.message }));
    return () => ab.abort();
  }, [src, dst, proto, live]);
  const pods = [...store.get('pods').values()].filter((p) => p.status?.podIP && !p.spec?.hostNetwork)
    .sort(byName);
  const nodes = [...store.get('nodes').values()].sort(byName);
  const svcTargets = [...store.get('services').values()].sort(byName)
    .filter((s) => s.spec?.clusterIP && s.spec.clusterIP !== 'None')
    .flatMap((s) => (s.spec.ports ?? []).map((p) => `svc/${nsName(s)}:${p.name || p.port}`));
  const nodePorts = [...store.get('services').values()].sort(byName).flatMap((s) =>
    (s.spec?.ports ?? []).filter((p) => p.nodePort).map((p) => [nsName(s), p.nodePort]));
  const submit = (e) => {
    e.preventDefault();
    location.hash = href('trace', [], { ...form, live: form.live && avail.ok ? '1' : undefined });
  };
  const set = (k) => (e) => setForm({ ...form, [k]: e.currentTarget.value });
  return html`<div class="trace">
    <form class="trace-form" onSubmit=${submit} aria-label="trace a packet">
      <label>source <input name="src" list="trace-sources" value=${form.src} onInput=${set('src')}
        placeholder="pod, node or outside IP" required /></label>
      <datalist id="trace-sources">
        ${pods.map((p) => html`<option value=${nsName(p)}>${p.status.podIP} on ${p.spec.nodeName}</option>`)}
        ${nodes.map((n) => html`<option value=${n.metadata.name}>node ${nodeIPs(n).join(', ')}</option>`)}
        <option value="192.0.2.10">outside client</option>
      </datalist>
      <label>destination <input name="dst" list="trace-targets" value=${form.dst} onInput=${set('dst')}
        placeholder="svc/ns/name:port, pod, node:port or IP:port" required /></label>
      <datalist id="trace-targets">
        ${svcTargets.map((t) => html`<option value=${t}></option>`)}
        ${pods.map((p) => html`<option value=${`${nsName(p)}:80`}>${p.status.podIP}</option>`)}
        ${nodePorts.flatMap(([svc, port]) => nodes.map((n) => html`<option
          value=${`${n.metadata.name}:${port}`}>NodePort of ${svc} on ${n.metadata.name}</option>`))}
      </datalist>
      <label>protocol <select name="proto" value=${form.proto} onChange=${set('proto')}>
        ${['tcp', 'udp', 'sctp', 'icmp'].map((p) => html`<option value=${p}>${p}</option>`)}
      </select></label>
      <label class=${`live-toggle${avail.ok ? '' : ' disabled'}`} title=${avail.why}>
        <input type="checkbox" name="live" checked=${form.live && avail.ok} disabled=${!avail.ok}
          onChange=${(e) => setForm({ ...form, live: e.currentTarget.checked })} /> live</label>
      <button type="submit">Trace</button>
    </form>
    ${result.loading ? html`<p class="muted">${live ? 'probing: capturing on every interface on the way…' : 'tracing…'}</p>` : ''}
    ${result.error ? html`<p class="error" role="alert">${result.error}</p>` : ''}
    ${result.t ? html`<${TraceResult} t=${result.t} />` : ''}
    ${!src || !dst ? html`<p class="muted">Pick a source and a destination: the packet is walked
      through routes and each node's compiled rules, every load-balancing branch followed.</p>` : ''}
  </div>`;
}
