// Every view is a hash route, so any state worth sharing is a link:
// `#/topology?ns=default&svc=default/web`, `#/trace?src=…&dst=…`, `#/rules/n1?a=3&b=5`,
// `#/events?obj=Pod/default/web-1`, `#/logs/default/web-1?container=web`.

import { useEffect, useState } from 'preact/hooks';

export function parseRoute(hash = location.hash) {
  const [path, query = ''] = hash.replace(/^#\/?/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { view: parts[0] || 'topology', parts: parts.slice(1),
    params: Object.fromEntries(new URLSearchParams(query)) };
}

/** The hash for `view` with `parts` and the non-empty `params`. */
export function href(view, parts = [], params = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ''));
  const p = [view, ...parts.map(encodeURIComponent)].join('/');
  const qs = q.toString();
  return `#/${p}${qs ? `?${qs}` : ''}`;
}

/** Same view and parts, some params changed (undefined removes one). */
export function withParams(route, changes) {
  return href(route.view, route.parts, { ...route.params, ...changes });
}

export function navigate(to) {
  if (location.hash !== to) location.hash = to;
}

export function useRoute() {
  const [route, setRoute] = useState(parseRoute());
  useEffect(() => {
    const on = () => setRoute(parseRoute());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
