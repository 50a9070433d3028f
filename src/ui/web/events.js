// Events, live from the API's watch, newest first; `obj=Kind/ns/name` narrows them to one object.

import { html } from 'htm/preact';
import { age } from './k8s.js';
import { withParams } from './router.js';

const when = (e) => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp;

export function Events({ store, route }) {
  const obj = route.params.obj ?? '';
  const [kind, ns, name] = obj.split('/');
  const items = [...store.get('events').values()]
    .filter((e) => !obj || (e.involvedObject?.kind === kind && (e.involvedObject?.namespace ?? '') === (name ? ns : '')
      && e.involvedObject?.name === (name ?? ns)))
    .sort((a, b) => (when(a) < when(b) ? 1 : -1)).slice(0, 500);
  return html`<div class="events">
    <p>${obj ? html`events of <b>${obj}</b> · <a href=${withParams(route, { obj: undefined })}>all events</a>`
      : 'all events (newest first)'}</p>
    <table><thead><tr><th>age</th><th>type</th><th>reason</th><th>object</th><th>message</th><th>count</th></tr></thead>
    <tbody>${items.map((e) => html`<tr class=${e.type === 'Warning' ? 'warning' : ''} key=${e.metadata.uid}>
      <td>${age(when(e))}</td><td>${e.type}</td><td>${e.reason}</td>
      <td><a href=${withParams(route, { obj: `${e.involvedObject.kind}/${e.involvedObject.namespace ? `${e.involvedObject.namespace}/` : ''}${e.involvedObject.name}` })}>
        ${e.involvedObject.kind}/${e.involvedObject.name}</a></td>
      <td>${e.message}</td><td>${e.count ?? 1}</td></tr>`)}</tbody></table>
    ${items.length === 0 ? html`<p class="muted">no events</p>` : ''}
  </div>`;
}
