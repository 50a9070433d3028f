// The trace view: pick a source and a destination, and see the packet's path as the tracer
// walks it — the same JSON `kdp trace -o json` prints, from the UI endpoint `/ui/api/trace`.
// Hops are drawn in order, grouped by where they happen (node, pod); a NAT step is
// highlighted; every load-balancing branch is drawn with its probability.

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

function Branch({ d, index }) {
  return html`<section class=${`branch ${d.verdict === 'ACCEPT' ? 'accept' : 'refused'}`}
    data-branch=${index} aria-label=${`branch ${index + 1}: ${d.destination}`}>
    <header>
      <span class="prob">${pct(d.probability)}</span>
      <b>${d.destination}</b> <span class=${`badge ${d.verdict === 'ACCEPT' ? 'ok' : 'bad'}`}>${d.verdict}</span>
      <span>reached ${d.reached}</span>
      ${d.masquerade ? html`<span class="badge warn">masqueraded: source seen ${d.sourceSeen}</span>` : ''}
    </header>
    ${groups(d.hops).map((g) => html`<div class="where"><h4>${g.where}</h4>
      <ol class="hops">${g.hops.map(([h, i]) => html`<${Hop} hop=${h} index=${i} />`)}</ol></div>`)}
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
    <div class="branches">${t.destinations.map((d, i) => html`<${Branch} d=${d} index=${i} />`)}</div>
  </div>`;
}

export function Trace({ store, route }) {
  const { src = '', dst = '', proto = 'tcp' } = route.params;
  const [form, setForm] = useState({ src, dst, proto });
  const [result, setResult] = useState({ loading: false });
  useEffect(() => setForm({ src, dst, proto }), [src, dst, proto]);
  useEffect(() => {
    if (!src || !dst) return setResult({ loading: false });
    const ab = new AbortController();
    setResult({ loading: true });
    const q = new URLSearchParams({ src, dst, proto });
    getJSON(`/ui/api/trace?${q}`, ab.signal).then((t) => setResult({ t }),
      (e) => !ab.signal.aborted && setResult({ error: e.message }));
    return () => ab.abort();
  }, [src, dst, proto]);
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
    location.hash = href('trace', [], form);
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
      <button type="submit">Trace</button>
    </form>
    ${result.loading ? html`<p class="muted">tracing…</p>` : ''}
    ${result.error ? html`<p class="error" role="alert">${result.error}</p>` : ''}
    ${result.t ? html`<${TraceResult} t=${result.t} />` : ''}
    ${!src || !dst ? html`<p class="muted">Pick a source and a destination: the packet is walked
      through routes and each node's compiled rules, every load-balancing branch followed.</p>` : ''}
  </div>`;
}
