// The cluster as the UI knows it: one live map per kind, fed by the UI server's single watch
// stream (`/ui/api/watch`: a RESET list per kind, then the API's watch events as the user, and
// each node's kube-proxy sync), and subscribers told at most once per animation frame however
// many events arrived (a burst of 100 pod changes is one render). One stream, because a
// browser opens at most six connections to a server; if it ends, the UI reconnects and relists.

import { streamLines } from './api.js';

export const KINDS = ['nodes', 'pods', 'services', 'endpointslices', 'events'];

const keyOf = (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}`
  : o.metadata.name);

/** Latency samples kept per node (one per kube-proxy sync, at most one a second). */
const SAMPLES_KEPT = 240;

/** Adds a sync summary's metric samples (newer than those held) to the node's series. */
function mergeSamples(latency, summary) {
  const had = latency.get(summary.node) ?? [];
  const last = had.length ? had[had.length - 1].time : -Infinity;
  const fresh = (summary.metrics ?? []).filter((x) => x.time > last);
  if (!fresh.length) return;
  const series = [...had, ...fresh];
  latency.set(summary.node, series.length > SAMPLES_KEPT ? series.slice(-SAMPLES_KEPT) : series);
}

export function buildStore() {
  const maps = { sync: new Map(), latency: new Map() };
  const status = { stream: 'connecting' };
  const errors = {};
  for (const k of KINDS) maps[k] = new Map();
  const subs = new Set();
  let scheduled = false;
  let version = 0;
  const changed = () => {
    version++;
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      for (const fn of subs) fn();
    });
  };
  const abort = new AbortController();
  const onLine = (line) => {
    const m = JSON.parse(line);
    const map = maps[m.kind];
    if (!map) return;
    if (m.type === 'RESET') {
      const fresh = new Map();
      for (const o of m.items) fresh.set(keyOf(o), o);
      maps[m.kind] = fresh;
      delete errors[m.kind];
    } else if (m.type === 'SYNC') {
      map.set(m.summary.node, m.summary);
      mergeSamples(maps.latency, m.summary);
    } else if (m.type === 'ERROR') {
      errors[m.kind] = m.message;
    } else if (m.type === 'DELETED') {
      map.delete(keyOf(m.object));
    } else {
      // Objects are replaced, never changed: views compare them by identity.
      map.set(keyOf(m.object), m.object);
    }
    changed();
  };
  (async () => {
    for (let backoff = 250; !abort.signal.aborted; backoff = Math.min(backoff * 2, 5000)) {
      try {
        const opened = Date.now();
        status.stream = 'connecting';
        await streamLines('/ui/api/watch', (line) => {
          if (status.stream !== 'live') { status.stream = 'live'; changed(); }
          onLine(line);
        }, abort.signal);
        if (Date.now() - opened > 10_000) backoff = 250;
        status.stream = 'reconnecting';
      } catch (e) {
        status.stream = e.message || String(e);
      }
      changed();
      await new Promise((r) => setTimeout(r, backoff));
    }
  })();
  return {
    get: (kind) => maps[kind],
    status: () => status,
    errors: () => errors,
    version: () => version,
    subscribe(fn) {
      subs.add(fn);
      return () => subs.delete(fn);
    },
    close: () => abort.abort(),
  };
}
