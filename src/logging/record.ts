// One log record of the cluster-level log store: what a node-level logging agent (fluent-bit
// tailing /var/log/pods, journald for the system units) would ship to a backend. A container's
// record carries the pod's labels as they were when the agent first saw the pod, so the lines
// of a deleted pod stay selectable by label.

import { parseRfc3339 } from '../util/rfc3339.js';

export type LogStream = 'stdout' | 'stderr';

/** The components whose own log lines are kept (`kdp logs --component`). */
export const COMPONENTS = [
  'apiserver', 'scheduler', 'controller-manager', 'kubelet', 'kube-proxy', 'dns', 'etcd',
] as const;
export type ComponentName = typeof COMPONENTS[number];

export interface ContainerSource {
  readonly kind: 'container';
  readonly namespace: string;
  readonly pod: string;
  readonly uid: string;
  readonly container: string;
  readonly node: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface ComponentSource {
  readonly kind: 'component';
  readonly component: ComponentName;
  /** The node a per-node component (kubelet, kube-proxy) runs on; absent for the control plane. */
  readonly node?: string;
}

export type LogSource = ContainerSource | ComponentSource;

export interface LogRecord {
  /** Milliseconds since the epoch; the fraction keeps microseconds. */
  readonly time: number;
  readonly source: LogSource;
  readonly stream: LogStream;
  /** One line, without its newline. */
  readonly message: string;
}

const keys = new WeakMap<LogSource, string>();

/**
 * A stable identity of a source (equal sources, equal keys), for per-segment source tables.
 * Remembered per source object: collectors reuse one object per container and component.
 */
export function sourceKey(s: LogSource): string {
  let k = keys.get(s);
  if (k === undefined) { k = computeKey(s); keys.set(s, k); }
  return k;
}

function computeKey(s: LogSource): string {
  if (s.kind === 'component') return `c\u0000${s.component}\u0000${s.node ?? ''}`;
  const labels = Object.keys(s.labels).sort().map((k) => `${k}=${s.labels[k]}`).join('\u0001');
  return `p\u0000${s.namespace}\u0000${s.pod}\u0000${s.uid}\u0000${s.container}\u0000${s.node}\u0000${labels}`;
}

/** RFC 3339 with microseconds (the store's precision), UTC. */
export function formatTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.round((ms - whole) * 1000);
  const iso = new Date(whole).toISOString(); // …T07:23:27.123Z
  return `${iso.slice(0, 23)}${String(Math.min(micros, 999)).padStart(3, '0')}Z`;
}

/**
 * Parses RFC 3339 as Go's time.Parse does (util/rfc3339.ts: fields in range, so a 30 February
 * is refused) into epoch milliseconds with the sub-millisecond fraction kept; NaN when it is not one.
 */
export function parseTime(s: string): number {
  const ns = parseRfc3339(s);
  return ns === undefined ? NaN : Number(ns / 1_000_000n) + Number(ns % 1_000_000n) / 1e6;
}
