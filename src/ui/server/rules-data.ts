// What the web UI shows of each node's kube-proxy: the numbered syncs it kept, one snapshot
// with the origins of its chains, and the diff between two syncs — read from the same files
// `kdp rules`, `kdp rules history` and `kdp diff --node` read (src/proxy/history.ts), and the
// same diff (src/diff). A feed tells subscribers when a node's last sync changes, from the file
// system's change notifications (no polling).

import { existsSync, readFileSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { dataDirPaths } from '../../cluster/data-dir.js';
import { runDiff } from '../../diff/diff.js';
import type { LoadedTable } from '../../diff/types.js';
import { kdpError } from '../../errors.js';
import {
  listSnapshots, readApplyStatus, readDriftStatus, readMetricSamples, readSnapshot, rulesDir,
  type ApplyStatus, type RuleSnapshot,
} from '../../proxy/history.js';
import type { MetricSample } from '../../proxy/metric-samples.js';
import type { IPFamily } from '../../proxy/types.js';

/** A node's kube-proxy at a glance: its mode and last kept sync per family. */
export interface SyncSummary {
  readonly node: string;
  readonly mode?: string;
  readonly syncs: ReadonlyArray<{ readonly family: IPFamily; readonly seq: number;
    readonly time: string }>;
  readonly apply: readonly ApplyStatus[];
  /** The newest samples of its latency metrics (metric-samples.ts), oldest first. */
  readonly metrics: readonly MetricSample[];
}

/** Samples a feed update carries: the page has the earlier ones, from the stream's start. */
export const UPDATE_SAMPLES = 4;

const NODE_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

/** The rules directory of `node`, refusing names that are not node names (no `..`). */
export function nodeRulesDir(dataDir: string, node: string): string {
  if (!NODE_NAME.test(node)) throw kdpError('KDP_BAD_REQUEST', `node: "${node}" is not a node name`);
  const dir = rulesDir(dataDir, node);
  if (!existsSync(dir)) throw kdpError('KDP_NOT_FOUND', `node ${node} has no kube-proxy rules here`);
  return dir;
}

/** The kube-proxy mode of the cluster of `dataDir` (cluster.json), when known. */
export function clusterProxyMode(dataDir: string): string | undefined {
  try {
    const info = JSON.parse(readFileSync(dataDirPaths(dataDir).clusterFile, 'utf8')) as
      { proxyMode?: string };
    return info.proxyMode;
  } catch {
    return undefined;
  }
}

/** Nodes with a rules directory. */
export function ruleNodes(dataDir: string): string[] {
  const dir = join(dataDir, 'nodes');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => NODE_NAME.test(n) && existsSync(rulesDir(dataDir, n))).sort();
}

/** From file names and times only: a snapshot of a large table is tens of MB. */
export function syncSummary(dataDir: string, node: string, mode = clusterProxyMode(dataDir),
  samples = Infinity): SyncSummary {
  const dir = rulesDir(dataDir, node);
  const last = new Map<IPFamily, { family: IPFamily; seq: number; time: string }>();
  for (const f of existsSync(dir) ? readdirSync(dir).sort() : []) {
    const m = /^(\d{6})-(IPv[46])\.json$/.exec(f);
    if (!m) continue;
    let time: string;
    try {
      time = statSync(join(dir, f)).mtime.toISOString();
    } catch {
      continue; // pruned meanwhile
    }
    last.set(m[2] as IPFamily, { family: m[2] as IPFamily, seq: Number(m[1]), time });
  }
  const metrics = readMetricSamples(dir);
  return { node, ...(mode ? { mode } : {}), syncs: [...last.values()], apply: readApplyStatus(dir),
    metrics: samples >= metrics.length ? metrics : metrics.slice(-samples) };
}

/** `kdp rules history --node` as data: every kept sync, and the apply and drift state. */
export function ruleHistory(dataDir: string, node: string) {
  const dir = nodeRulesDir(dataDir, node);
  return { node, mode: clusterProxyMode(dataDir), snapshots: listSnapshots(dir),
    apply: readApplyStatus(dir), drift: readDriftStatus(dir) };
}

function parseFamily(f: string | undefined): IPFamily {
  if (f === undefined || f === '' || f === 'IPv4') return 'IPv4';
  if (f === 'IPv6') return 'IPv6';
  throw kdpError('KDP_BAD_REQUEST', `family: "${f}" is not IPv4 or IPv6`);
}

function parseRef(ref: string | undefined, field: string): string {
  const r = ref === undefined || ref === '' ? '@latest' : ref.startsWith('@') ? ref : `@${ref}`;
  if (!/^@(?:\d+|latest(?:~\d+)?)$/.test(r)) {
    throw kdpError('KDP_BAD_REQUEST', `${field}: "${ref}" is not a sync number, latest or latest~K`);
  }
  return r;
}

/** One kept sync (`kdp rules @N -o json`). */
export function ruleSnapshot(dataDir: string, node: string, ref?: string, family?: string): RuleSnapshot {
  return readSnapshot(nodeRulesDir(dataDir, node), parseRef(ref, 'seq'), parseFamily(family));
}

/** `kdp diff --node N A B -o json`, semantic and by rules. */
export function ruleDiff(dataDir: string, node: string, a?: string, b?: string, family?: string) {
  const dir = nodeRulesDir(dataDir, node);
  const fam = parseFamily(family);
  const load = (ref: string): LoadedTable => {
    const s = readSnapshot(dir, ref, fam);
    return { label: `node ${node} @${s.seq}`, text: s.text, format: s.mode,
      origins: new Map(Object.entries(s.origins ?? {})) };
  };
  const ta = load(parseRef(a ?? '@latest~1', 'a'));
  const tb = load(parseRef(b, 'b'));
  const opts = { json: true, colour: false, nodeIPs: [], podCIDRs: [] };
  const semantic = JSON.parse(runDiff(ta, tb, { ...opts, view: 'semantic' }).text) as unknown;
  const rules = JSON.parse(runDiff(ta, tb, { ...opts, view: 'rules' }).text) as unknown;
  return { node, family: fam, a: ta.label, b: tb.label, semantic, rules };
}

export interface SyncFeed {
  /** Calls `fn` with a node's summary whenever its kept syncs or apply state change. */
  subscribe(fn: (s: SyncSummary) => void): () => void;
}

/** One file-system watch for every subscriber, opened at the first and closed after the last. */
export function buildSyncFeed(dataDir: string, debounceMs = 25): SyncFeed {
  const subs = new Set<(s: SyncSummary) => void>();
  const timers = new Map<string, NodeJS.Timeout>();
  let watchers: FSWatcher[] = [];
  const changed = (node: string) => {
    if (timers.has(node) || !NODE_NAME.test(node)) return;
    timers.set(node, setTimeout(() => {
      timers.delete(node);
      let s: SyncSummary;
      try {
        s = syncSummary(dataDir, node, undefined, UPDATE_SAMPLES);
      } catch {
        return;
      }
      for (const fn of subs) fn(s);
    }, debounceMs));
  };
  const start = () => {
    const nodes = join(dataDir, 'nodes');
    try {
      const w = watch(existsSync(nodes) ? nodes : dataDir, { recursive: existsSync(nodes) },
        (_ev, file) => {
          const name = String(file ?? '').split('/');
          if (existsSync(nodes) && name[0]) changed(name[0]);
        });
      w.on('error', () => undefined);
      watchers.push(w);
    } catch {
      // no data dir to watch: the feed stays silent
    }
  };
  const stop = () => {
    for (const w of watchers) w.close();
    watchers = [];
    for (const t of timers.values()) clearTimeout(t);
    timers.clear();
  };
  return {
    subscribe(fn) {
      if (subs.size === 0) start();
      subs.add(fn);
      return () => {
        subs.delete(fn);
        if (subs.size === 0) stop();
      };
    },
  };
}
