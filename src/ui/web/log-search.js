// Log search: the cluster log store (what `kdp logs` reads) searched with the same filters —
// namespace or all, label selector, pod, container, component, node, since, grep — through
// `/ui/api/logs`, the results streamed in (the newest matches, then new ones as they are
// written when following). Lines of pods no longer in the cluster are marked `deleted`: the
// store keeps them after the pod is gone. The form is the URL: every search is a link.

import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { streamLines } from './api.js';
import { href } from './router.js';

const FIELDS = ['ns', 'all', 'selector', 'pod', 'container', 'component', 'node', 'since', 'grep', 'follow'];
const COMPONENTS = ['', 'apiserver', 'scheduler', 'controller-manager', 'kubelet', 'kube-proxy', 'dns', 'etcd'];
const MAX_SHOWN = 5000;

export function LogSearch({ store, route }) {
  const params = route.params;
  const searched = FIELDS.some((k) => params[k]);
  const [form, setForm] = useState(params);
  const [state, setState] = useState({ lines: [], scanned: undefined, error: '' });
  const box = useRef(null);
  useEffect(() => setForm(params), [route]);
  useEffect(() => {
    if (!searched) return undefined;
    const ab = new AbortController();
    let lines = [];
    let scanned;
    let frame = 0;
    setState({ lines: [], scanned: undefined, error: '', running: true });
    const show = () => { frame = 0; setState({ lines, scanned, error: '', running: true }); };
    const q = new URLSearchParams(Object.entries(params).filter(([k, v]) => FIELDS.includes(k) && v));
    streamLines(`/ui/api/logs?${q}`, (line) => {
      const m = JSON.parse(line);
      if (m.type === 'LINE') {
        lines.push(m);
        if (lines.length > MAX_SHOWN) lines = lines.slice(-MAX_SHOWN);
      } else if (m.type === 'SCANNED') {
        scanned = m;
      } else if (m.type === 'ERROR') {
        setState({ lines, scanned, error: m.message });
        return;
      }
      frame ||= requestAnimationFrame(show);
    }, ab.signal).then(() => {
      cancelAnimationFrame(frame);
      setState({ lines, scanned, error: '', running: false });
    }, (e) => !ab.signal.aborted && setState({ lines, scanned, error: e.message, running: false }));
    return () => ab.abort();
  }, [route]);
  useEffect(() => { if (box.current) box.current.scrollTop = box.current.scrollHeight; }, [state.lines]);
  const uids = new Set([...store.get('pods').values()].map((p) => p.metadata.uid));
  const set = (k) => (e) => {
    const t = e.currentTarget;
    setForm({ ...form, [k]: t.type === 'checkbox' ? (t.checked ? '1' : '') : t.value });
  };
  const submit = (e) => {
    e.preventDefault();
    location.hash = href('search', [], Object.fromEntries(FIELDS.map((k) => [k, k === 'ns' && form.all ? '' : form[k]])));
  };
  const field = (k, label, placeholder, size = 10) => html`<label>${label} <input name=${k} value=${form[k] ?? ''}
    onInput=${set(k)} placeholder=${placeholder} size=${size} /></label>`;
  const { lines, scanned, error } = state;
  return html`<div class="log-search">
    <form class="search-form" onSubmit=${submit} aria-label="search the cluster log store">
      ${field('grep', 'grep', 'regular expression, (?i) ignores case', 22)}
      ${field('ns', 'namespace', 'default', 9)}
      <label><input type="checkbox" name="all" checked=${!!form.all} onChange=${set('all')} /> all namespaces</label>
      ${field('selector', 'selector', 'app=web')}
      ${field('pod', 'pod', 'name')}
      ${field('container', 'container', 'name', 8)}
      <label>component <select name="component" value=${form.component ?? ''} onChange=${set('component')}>
        ${COMPONENTS.map((c) => html`<option value=${c}>${c || '(pods)'}</option>`)}</select></label>
      ${field('node', 'node', 'n1', 6)}
      ${field('since', 'since', '10m', 5)}
      <label><input type="checkbox" name="follow" checked=${!!form.follow} onChange=${set('follow')} /> follow</label>
      <button type="submit">Search</button>
    </form>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    ${searched ? html`<p class="muted search-status">${scanned
      ? `${scanned.matched} matching line${scanned.matched === 1 ? '' : 's'} kept${scanned.matched > scanned.shown
        ? `, the newest ${scanned.shown} shown` : ''}${state.running ? ' · following' : ''}`
      : 'searching…'}</p>` : html`<p class="muted">Searches the logs the cluster keeps — every container's
      output, deleted pods' included, and the components' lines (<code>kdp logs</code>, the same filters).</p>`}
    <div class="search-results" ref=${box} tabindex="0" aria-label="matching lines">
      ${lines.map((l) => {
        const gone = l.kind === 'container' && !uids.has(l.uid);
        return html`<div class=${`log-line ${l.kind}${gone ? ' deleted' : ''}`} data-source=${l.source}>
          <span class="t">${l.time.slice(11, 23)}</span> <span class="n">${l.node || '-'}</span>
          <span class="s">${l.source}${gone ? html` <span class="badge warn">deleted</span>` : ''}</span>
          <span class="m">${l.message}</span></div>`;
      })}
    </div>
  </div>`;
}
