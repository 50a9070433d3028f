// The rules view: a node's kept syncs (numbered, as `kdp rules history`), the tables of one
// sync with the Service port each chain belongs to, and the diff between two syncs (as
// `kdp diff --node N @A @B`). The list follows new syncs as the sync feed reports them.

import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { getJSON } from './api.js';
import { byName, clock } from './k8s.js';
import { href, withParams } from './router.js';
import { syncOf } from './sync.js';

function useJSON(path, deps) {
  const [r, setR] = useState({});
  useEffect(() => {
    if (!path) return setR({});
    const ab = new AbortController();
    getJSON(path, ab.signal).then((data) => setR({ data }),
      (e) => !ab.signal.aborted && setR({ error: e.message }));
    return () => ab.abort();
  }, deps);
  return r;
}

/** Chain or set name a line of a dump defines or appends to (iptables, nftables). */
function chainOf(line) {
  const m = /^(?:-A|:)(\S+)/.exec(line) ?? /^\s*chain (\S+)/.exec(line) ?? /^-A (\S+)/.exec(line);
  return m?.[1];
}

function Snapshot({ snap }) {
  const origins = snap.origins ?? {};
  let current;
  const lines = snap.text.split('\n').map((line, i) => {
    if (/^\s*chain \S+/.test(line)) current = chainOf(line);
    const chain = line.startsWith('-A ') || line.startsWith(':') ? chainOf(line) : current;
    const o = chain ? origins[chain] : undefined;
    return html`<div class=${`rule-line${o ? ' has-origin' : ''}`} key=${i}><code>${line}</code>${o && (line.startsWith(':') || /^\s*chain /.test(line))
      ? html`<span class="origin">${o.servicePort}${o.endpoint ? ` → ${o.endpoint}` : ''}</span>` : ''}</div>`;
  });
  return html`<div class="snapshot" aria-label=${`sync ${snap.seq}`}>
    <h3>sync #${snap.seq} · ${snap.mode} ${snap.family} · ${snap.full ? 'full' : 'partial'} · ${clock(snap.time)}</h3>
    <div class="rule-text">${lines}</div></div>`;
}

function Diff({ diff }) {
  const changes = diff.semantic?.changes ?? [];
  return html`<div class="diff" aria-label="rule diff">
    <h3>${diff.a} → ${diff.b}</h3>
    ${changes.length === 0 ? html`<p class="muted">${diff.semantic?.textDiffers
      ? 'no semantic difference (the rules differ only in comments or order)' : 'no difference'}</p>` : ''}
    <ul class="changes">${changes.map((c) => html`<li class=${`change ${c.kind}`}>
      <b>${c.kind}</b>${' '}<span class="group">${c.group || '(no Service)'}</span>${c.family ? ` (${c.family})` : ''}${' '}
      <code>${c.key}${c.kind === 'changed' ? `: ${c.before ?? ''} → ${c.after ?? ''}`
        : (c.after ?? c.before) ? ` ${c.after ?? c.before}` : ''}</code>
    </li>`)}</ul>
    <details open=${changes.length === 0 && diff.rules?.diff?.length > 0}><summary>rules (unified diff)</summary>
      <pre class="unified">${(diff.rules?.diff ?? []).map((l) => html`<span class=${l.startsWith('+') ? 'add'
        : l.startsWith('-') ? 'del' : l.startsWith('@@') ? 'hunk' : ''}>${l}\n</span>`)}</pre></details>
  </div>`;
}

export function Rules({ store, route }) {
  const nodes = [...store.get('nodes').values()].sort(byName).map((n) => n.metadata.name);
  const node = route.parts[0] ?? nodes[0];
  const sync = syncOf(store);
  const lastSeq = sync.get(node)?.syncs?.map((s) => s.seq).join(',');
  const history = useJSON(node ? `/ui/api/rules/${encodeURIComponent(node)}` : undefined, [node, lastSeq]);
  const { seq, a, b, family = 'IPv4' } = route.params;
  const base = node ? `/ui/api/rules/${encodeURIComponent(node)}` : undefined;
  const snapPath = base && `${base}/snapshot?${new URLSearchParams({ seq: seq ?? 'latest', family })}`;
  const snap = useJSON(a || b ? undefined : snapPath, [node, seq, a, b, family, seq ? '' : lastSeq]);
  const diffQuery = new URLSearchParams({ a: a ?? 'latest~1', b: b ?? 'latest', family });
  const diff = useJSON(base && (a || b) ? `${base}/diff?${diffQuery}` : undefined, [node, a, b, family]);
  const snaps = [...(history.data?.snapshots ?? [])].reverse();
  const lastTwo = snaps.filter((x) => x.family === snaps[0]?.family).slice(0, 2);
  return html`<div class="rules">
    <nav class="tabs" aria-label="nodes">${nodes.map((n) => html`<a href=${href('rules', [n])}
      aria-current=${n === node ? 'page' : undefined}>${n}</a>`)}</nav>
    <div class="rules-body">
      <div class="history" aria-label="sync history">
        <h3>syncs of ${node ?? '—'} ${history.data?.mode ? `(${history.data.mode})` : ''}</h3>
        ${history.error ? html`<p class="error">${history.error}</p>` : ''}
        <table><thead><tr><th>#</th><th>time</th><th>family</th><th>kind</th><th title="diff from">A</th><th title="diff to">B</th></tr></thead>
        <tbody>${snaps.map((s) => html`<tr class=${String(s.seq) === seq ? 'current' : ''}>
          <td><a href=${href('rules', [node], { seq: String(s.seq), family: s.family })}>#${s.seq}</a></td>
          <td>${clock(s.time)}</td><td>${s.family}</td><td>${s.full ? 'full' : 'partial'}</td>
          <td><a class="pick-a" href=${withParams(route, { a: String(s.seq), seq: undefined, b: b ?? 'latest', family: s.family })}
            aria-label=${`diff from #${s.seq}`}>${a === String(s.seq) ? '●' : '○'}</a></td>
          <td><a class="pick-b" href=${withParams(route, { b: String(s.seq), seq: undefined, a: a ?? 'latest~1', family: s.family })}
            aria-label=${`diff to #${s.seq}`}>${b === String(s.seq) ? '●' : '○'}</a></td>
        </tr>`)}</tbody></table>
        ${lastTwo.length > 1 ? html`<p><a class="diff-last" href=${withParams(route, { a: String(lastTwo[1].seq),
          b: String(lastTwo[0].seq), seq: undefined, family: lastTwo[0].family })}>diff the last two syncs</a></p>` : ''}
      </div>
      <div class="rules-main">
        ${snap.error || diff.error ? html`<p class="error" role="alert">${snap.error || diff.error}</p>` : ''}
        ${diff.data ? html`<${Diff} diff=${diff.data} />` : ''}
        ${snap.data ? html`<${Snapshot} snap=${snap.data} />` : ''}
      </div>
    </div>
  </div>`;
}
