// kube-proxy's latencies per node, live: the network programming latency (an EndpointSlice
// change to its rules in the kernel, `kubeproxy_network_programming_duration_seconds`) and the
// rule sync duration (`kubeproxy_sync_proxy_rules_duration_seconds`), each point the mean over
// the interval between two samples of the histogram's sum and count — what
// rate(…_sum)/rate(…_count) shows in Prometheus. The samples come with each node's sync on the
// watch stream (store.js); the charts are small hand-drawn SVGs, no chart library.

import { html } from 'htm/preact';
import { byName } from './k8s.js';

const W = 320;
const H = 96;
const PAD = { l: 44, r: 8, t: 8, b: 18 };

/** [time, mean] per interval in which the histogram gained observations (a restart: skipped). */
export function intervalMeans(samples, key) {
  const out = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1][key];
    const b = samples[i][key];
    const n = b.count - a.count;
    if (n > 0 && b.sum >= a.sum) out.push([samples[i].time, (b.sum - a.sum) / n]);
  }
  return out;
}

const fmt = (v, unit) => (unit === 'ms' ? `${v < 10 ? v.toFixed(2) : v.toFixed(0)} ms`
  : `${v < 10 ? v.toFixed(2) : v.toFixed(1)} s`);

function Chart({ name, title, points, unit, scale, from, to }) {
  const vals = points.map(([, v]) => v * scale);
  const max = Math.max(...vals, unit === 'ms' ? 1 : 0.25) * 1.1;
  const span = Math.max(to - from, 1);
  const x = (t) => PAD.l + ((t - from) / span) * (W - PAD.l - PAD.r);
  const y = (v) => H - PAD.b - (v / max) * (H - PAD.t - PAD.b);
  const d = points.map(([t], i) => `${i ? 'L' : 'M'}${x(t).toFixed(1)},${y(vals[i]).toFixed(1)}`).join('');
  const last = vals.length ? vals[vals.length - 1] : undefined;
  return html`<figure class="chart" data-chart=${name} data-points=${points.length}>
    <figcaption>${title}${last !== undefined ? html` <b class="last">${fmt(last, unit)}</b>` : ''}</figcaption>
    <svg viewBox=${`0 0 ${W} ${H}`} width=${W} height=${H} role="img"
      aria-label=${`${title}: ${points.length} points${last !== undefined ? `, last ${fmt(last, unit)}` : ''}`}>
      <line class="axis" x1=${PAD.l} y1=${H - PAD.b} x2=${W - PAD.r} y2=${H - PAD.b} />
      <line class="axis" x1=${PAD.l} y1=${PAD.t} x2=${PAD.l} y2=${H - PAD.b} />
      <text class="tick" x=${PAD.l - 4} y=${PAD.t + 8} text-anchor="end">${fmt(max, unit)}</text>
      <text class="tick" x=${PAD.l - 4} y=${H - PAD.b} text-anchor="end">0</text>
      <text class="tick" x=${W - PAD.r} y=${H - 4} text-anchor="end">now</text>
      <text class="tick" x=${PAD.l} y=${H - 4}>−${Math.round(span / 1000)} s</text>
      ${points.length ? html`<path class="series" d=${d} />` : ''}
      ${points.map(([t], i) => html`<circle class="pt" cx=${x(t).toFixed(1)} cy=${y(vals[i]).toFixed(1)} r="2"><title>${new Date(t).toLocaleTimeString()}: ${fmt(vals[i], unit)}</title></circle>`)}
    </svg>
  </figure>`;
}

export function Latency({ store }) {
  const series = store.get('latency');
  const nodes = [...store.get('nodes').values()].sort(byName).map((n) => n.metadata.name);
  for (const n of series.keys()) if (!nodes.includes(n)) nodes.push(n);
  const all = [...series.values()].flat();
  const to = all.length ? Math.max(...all.map((s) => s.time)) : Date.now();
  const from = all.length ? Math.min(...all.map((s) => s.time)) : to - 60_000;
  return html`<div class="latency">
    <p class="muted">Each point: the mean over one interval between kube-proxy's samples of its
      histograms (<code>kubeproxy_network_programming_duration_seconds</code>,
      <code>kubeproxy_sync_proxy_rules_duration_seconds</code>, as <code>/metrics</code> serves them).</p>
    <div class="latency-nodes">${nodes.map((node) => {
      const s = series.get(node) ?? [];
      const latest = s[s.length - 1];
      return html`<section class="latency-node" data-node=${node}>
        <h3>${node} <span class="muted">${latest ? `${latest.sync.count} syncs, ${latest.programming.count} changes programmed` : 'no samples yet'}</span></h3>
        <${Chart} name="programming" title="network programming latency" unit="s" scale=${1}
          points=${intervalMeans(s, 'programming')} from=${from} to=${to} />
        <${Chart} name="sync" title="rule sync duration" unit="ms" scale=${1000}
          points=${intervalMeans(s, 'sync')} from=${from} to=${to} />
      </section>`;
    })}</div>
  </div>`;
}
