// A container's log, followed through the API (pods/log?follow=true, the kubelet path).

import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { streamLines } from './api.js';
import { byName, nsName } from './k8s.js';
import { href, withParams } from './router.js';

const MAX_LINES = 5000;

export function Logs({ store, route }) {
  const [ns, name] = route.parts;
  const pod = ns && name ? store.get('pods').get(`${ns}/${name}`) : undefined;
  const containers = (pod?.spec?.containers ?? []).map((c) => c.name);
  const container = route.params.container ?? containers[0];
  const [lines, setLines] = useState([]);
  const [error, setError] = useState('');
  const pre = useRef(null);
  useEffect(() => {
    if (!ns || !name || !container) return undefined;
    const ab = new AbortController();
    let buf = [];
    setLines([]);
    setError('');
    let frame = 0;
    const flush = () => { frame = 0; setLines([...buf]); };
    const q = new URLSearchParams({ follow: 'true', container, tailLines: '1000' });
    streamLines(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}/log?${q}`,
      (l) => {
        buf.push(l);
        if (buf.length > MAX_LINES) buf = buf.slice(-MAX_LINES);
        frame ||= requestAnimationFrame(flush);
      }, ab.signal).catch((e) => !ab.signal.aborted && setError(e.message));
    return () => ab.abort();
  }, [ns, name, container]);
  useEffect(() => { if (pre.current) pre.current.scrollTop = pre.current.scrollHeight; }, [lines]);
  const pods = [...store.get('pods').values()].sort(byName);
  return html`<div class="logs">
    <form class="toolbar" onSubmit=${(e) => e.preventDefault()}>
      <label>pod <select value=${ns && name ? `${ns}/${name}` : ''} onChange=${(e) => {
        const [n, p] = e.currentTarget.value.split('/');
        location.hash = href('logs', [n, p]);
      }}><option value="">choose a pod</option>${pods.map((p) => html`<option value=${nsName(p)}>${nsName(p)}</option>`)}</select></label>
      ${containers.length > 1 ? html`<label>container <select value=${container}
        onChange=${(e) => { location.hash = withParams(route, { container: e.currentTarget.value }); }}>
        ${containers.map((c) => html`<option value=${c}>${c}</option>`)}</select></label>` : ''}
      <span class="muted">${ns && name ? 'following' : ''}</span>
    </form>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    <pre class="log" ref=${pre} tabindex="0" aria-label="log">${lines.join('\n')}</pre>
  </div>`;
}
