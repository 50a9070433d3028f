// The kdp web UI: one page, views chosen by the URL's hash, the cluster kept live by watches.

import { html, render } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { getJSON } from './api.js';
import { buildStore } from './store.js';
import { href, navigate, useRoute } from './router.js';
import { Topology } from './topology.js';
import { Trace } from './trace.js';
import { Rules } from './rules.js';
import { Events } from './events.js';
import { Logs } from './logs.js';
import { LogSearch } from './log-search.js';
import { Latency } from './latency.js';

const VIEWS = [
  ['topology', 'Topology', Topology], ['trace', 'Trace', Trace], ['rules', 'Rules', Rules],
  ['events', 'Events', Events], ['logs', 'Logs', Logs], ['search', 'Log search', LogSearch],
  ['latency', 'Latency', Latency],
];

function App({ store }) {
  const route = useRoute();
  const [, setVersion] = useState(0);
  const [who, setWho] = useState();
  const [cluster, setCluster] = useState();
  useEffect(() => store.subscribe(() => setVersion(store.version())), []);
  useEffect(() => {
    getJSON('/ui/api/whoami').then(setWho, () => undefined);
    getJSON('/ui/api/cluster').then(setCluster, () => undefined);
  }, []);
  useEffect(() => {
    // Keys 1–7 switch views (not while typing); `/` focuses the first field of the view.
    const onKey = (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey || /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
      const i = Number(e.key) - 1;
      if (i >= 0 && i < VIEWS.length) navigate(href(VIEWS[i][0]));
      if (e.key === '/') {
        const f = document.querySelector('main input, main select');
        if (f) { e.preventDefault(); f.focus(); }
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
  const status = store.status();
  const down = status.stream === 'live' ? [] : [['watch', status.stream]];
  const View = (VIEWS.find(([v]) => v === route.view) ?? VIEWS[0])[2];
  return html`<div class="app">
    <header class="top">
      <a class="brand" href="#/topology">kdp</a>
      <nav aria-label="views">${VIEWS.map(([v, label], i) => html`<a href=${href(v)}
        aria-current=${route.view === v ? 'page' : undefined} title=${`key ${i + 1}`}>${label}</a>`)}</nav>
      <span class=${`conn ${down.length ? 'bad' : 'ok'}`} role="status"
        title=${down.map(([k, s]) => `${k}: ${s}`).join('\n')}>${down.length ? status.stream : 'live'}</span>
      <span class="who">${who ? `${who.name} · read-only` : ''}</span>
      <a class="logout" href="/ui/logout">log out</a>
    </header>
    <main id="view" data-view=${route.view}><${View} store=${store} route=${route} cluster=${cluster} /></main>
  </div>`;
}

const store = buildStore();
render(html`<${App} store=${store} />`, document.getElementById('app'));
