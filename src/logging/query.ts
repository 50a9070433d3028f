// `kdp logs`' filters as data: which sources (namespace, label selector, pod, container, node,
// or components), since when, and a pattern — validated, each error naming its flag, and
// turned into a LogQuery for the reader. The web UI searches the store with the same filters.

import { parseLabelSelector, type LabelMatcher } from '../api/selectors.js';
import { kdpError } from '../errors.js';
import { compileGrep } from './grep-scan.js';
import type { LogQuery } from './log-reader.js';
import { COMPONENTS, parseTime, type ComponentName, type LogSource } from './record.js';

export interface LogFilters {
  /** Containers of this namespace; undefined with allNamespaces. Default `default`. */
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly selector?: string;
  readonly pod?: string;
  readonly container?: string;
  /** Comma-separated component names; then only component lines are shown. */
  readonly component?: string;
  readonly node?: string;
  /** A Go duration (`10m`, `1h30m`). */
  readonly since?: string;
  /** RFC 3339. */
  readonly sinceTime?: string;
  readonly grep?: string;
}

/** Components that run as kube-system pods (kubeadm's labels): `--component` includes their
 *  containers' output — the DNS addon's CoreDNS pods, and kube-proxy's DaemonSet pods. */
const COMPONENT_PODS: Partial<Record<ComponentName, string>> = { dns: 'kube-dns', 'kube-proxy': 'kube-proxy' };

/** Parses a Go duration (`300ms`, `1.5h`, `2h45m`) into milliseconds; NaN when it is not one. */
export function parseDuration(s: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(s)) return NaN;
  let ms = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * units[m[2]!]!;
  return ms;
}

/** The query for `f` at time `now`. Throws KDP_CONFIG naming the flag at fault. */
export function buildLogQuery(f: LogFilters, now: number = Date.now()): LogQuery {
  const bad = (flag: string, why: string): never => { throw kdpError('KDP_CONFIG', `${flag}: ${why}`); };
  let sinceMs: number | undefined;
  if (f.since !== undefined && f.sinceTime !== undefined) {
    bad('--since', 'only one of --since and --since-time may be given');
  }
  if (f.since !== undefined) {
    const d = parseDuration(f.since);
    if (Number.isNaN(d) || d <= 0) {
      bad('--since', `${JSON.stringify(f.since)} is not a positive duration (e.g. 30s, 10m, 1h30m)`);
    }
    sinceMs = now - d;
  }
  if (f.sinceTime !== undefined) {
    sinceMs = parseTime(f.sinceTime);
    if (Number.isNaN(sinceMs)) {
      bad('--since-time', `${JSON.stringify(f.sinceTime)} is not an RFC 3339 time (e.g. 2026-12-04T07:00:00Z)`);
    }
  }
  let grep: LogQuery['grep'];
  if (f.grep !== undefined) {
    try { grep = compileGrep(f.grep); } catch (e) { bad('--grep', (e as Error).message); }
  }
  if (f.component !== undefined) {
    const podFlags = [['-l/--selector', f.selector], ['--pod', f.pod], ['--container', f.container]] as const;
    for (const [flag, v] of podFlags) {
      if (v !== undefined) bad(flag, 'selects containers; it cannot be combined with --component');
    }
    const names = f.component.split(',').map((c) => c.trim());
    for (const c of names) {
      if (!(COMPONENTS as readonly string[]).includes(c)) {
        bad('--component', `unknown component ${JSON.stringify(c)} (one of ${COMPONENTS.join(', ')})`);
      }
    }
    const wanted = new Set(names as ComponentName[]);
    const node = f.node;
    return { sinceMs, grep, source: (s) => {
      if (node !== undefined && s.node !== node) return false;
      if (s.kind === 'component') return wanted.has(s.component);
      const app = s.namespace === 'kube-system' ? s.labels['k8s-app'] : undefined;
      return app !== undefined && [...wanted].some((c) => COMPONENT_PODS[c] === app);
    } };
  }
  let selector: LabelMatcher | undefined;
  if (f.selector !== undefined) {
    try { selector = parseLabelSelector(f.selector); } catch (e) { bad('-l/--selector', (e as Error).message); }
  }
  const ns = f.allNamespaces ? undefined : f.namespace ?? 'default';
  return { sinceMs, grep, source: (s) => s.kind === 'container'
    && (ns === undefined || s.namespace === ns)
    && (f.pod === undefined || s.pod === f.pod)
    && (f.container === undefined || s.container === f.container)
    && (f.node === undefined || s.node === f.node)
    && (selector === undefined || selector.matches(s.labels)) };
}
