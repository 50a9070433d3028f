// Numbered snapshots of what a node's kube-proxy holds after each applied sync, kept as files
// under `<dataDir>/nodes/<node>/rules/` so that `kdp rules`, `kdp rules history` and `kdp diff`
// (other processes) can read them. Bounded: the oldest are removed past `keep`. Next to them,
// `drift.json`: what the last comparison of the kernel with the compiled rules found, and
// `apply.json`: whether the last apply of each family failed, how often in a row, and why;
// `metrics.json`: the latency metrics' recent samples (metric-samples.ts, the UI's plots).

import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, writePrivateFileSync } from '../util/private-files.js';
import { kdpError } from '../errors.js';
import type { ProxyMode, RuleOrigin } from './backend.js';
import type { IPFamily } from './types.js';
import { SAMPLES_KEPT, type MetricSample } from './metric-samples.js';

export interface RuleSnapshotMeta {
  readonly seq: number;
  readonly time: string;
  readonly mode: ProxyMode;
  readonly family: IPFamily;
  readonly full: boolean;
  readonly file: string;
}

export interface RuleSnapshot extends RuleSnapshotMeta {
  readonly text: string;
  /** Chain/set name → origin (the compiler's bookkeeping), for trace and diff. */
  readonly origins: Readonly<Record<string, RuleOrigin>>;
}

export function rulesDir(dataDir: string, node: string): string {
  return join(dataDir, 'nodes', node, 'rules');
}

export class RuleHistory {
  private seq: number;
  private samples: MetricSample[];

  constructor(private readonly dir: string, private readonly keep = 50) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    this.seq = Math.max(0, ...snapshotFiles(dir).map((f) => f.seq));
    // A restarted kube-proxy's counters start again from 0: its samples start a new series.
    this.samples = [];
  }

  /** Appends a sample of the latency metrics to `metrics.json` (the last SAMPLES_KEPT). */
  recordMetrics(sample: MetricSample): void {
    this.samples.push(sample);
    if (this.samples.length > SAMPLES_KEPT) this.samples.splice(0, this.samples.length - SAMPLES_KEPT);
    writeJSON(this.dir, METRICS_FILE, this.samples);
  }

  recordDrift(statuses: readonly DriftStatus[]): void {
    writeDriftStatus(this.dir, statuses);
  }

  recordApply(statuses: readonly ApplyStatus[]): void {
    writeJSON(this.dir, APPLY_FILE, statuses);
  }

  record(s: Omit<RuleSnapshot, 'seq' | 'file' | 'time'>): RuleSnapshotMeta {
    const seq = ++this.seq;
    const file = `${String(seq).padStart(6, '0')}-${s.family}.json`;
    const snap: RuleSnapshot = { ...s, seq, file, time: new Date().toISOString() };
    const tmp = join(this.dir, `.${file}.tmp`);
    writePrivateFileSync(tmp, JSON.stringify(snap));
    renameSync(tmp, join(this.dir, file));
    for (const old of snapshotFiles(this.dir).slice(0, -this.keep)) rmSync(join(this.dir, old.file), { force: true });
    return snap;
  }
}

/** What the last drift check of a node found, per family (`<rules dir>/drift.json`). */
export interface DriftStatus {
  readonly family: IPFamily;
  /** When the kernel was last compared with the compiled rules. */
  readonly checkedAt: string;
  readonly inSync: boolean;
  /** The last drift seen (kept after it healed): when, how many differences, the first few. */
  readonly lastDrift?: { readonly time: string; readonly count: number; readonly differences: string[] };
  readonly healedAt?: string;
  /** Times drift was found since the agent started. */
  readonly drifts: number;
}

/**
 * How kube-proxy's applies of one family went (`<rules dir>/apply.json`). A failed apply leaves
 * the kernel with the rules of the last good one; the next good apply clears `failed`.
 */
export interface ApplyStatus {
  readonly family: IPFamily;
  /** The last apply failed. */
  readonly failed: boolean;
  /** Failed applies in a row (0 after a good one). */
  readonly failures: number;
  /** When the current state began: the first failure in a row, or the first good apply after. */
  readonly since: string;
  /** The last failure (kept after a good apply): when, and the applier's error. */
  readonly lastError?: { readonly time: string; readonly message: string };
}

const DRIFT_FILE = 'drift.json';
const APPLY_FILE = 'apply.json';
const METRICS_FILE = 'metrics.json';

/** The latency samples a node's kube-proxy kept (oldest first; none when it kept none). */
export function readMetricSamples(dir: string): MetricSample[] {
  return readJSONList<MetricSample>(dir, METRICS_FILE);
}

function writeJSON(dir: string, file: string, value: unknown): void {
  const tmp = join(dir, `.${file}.tmp`);
  writePrivateFileSync(tmp, JSON.stringify(value));
  renameSync(tmp, join(dir, file));
}

function readJSONList<T>(dir: string, file: string): T[] {
  try {
    const v = JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown;
    return Array.isArray(v) ? (v as T[]) : [];
  } catch {
    return [];
  }
}

export function writeDriftStatus(dir: string, statuses: readonly DriftStatus[]): void {
  writeJSON(dir, DRIFT_FILE, statuses);
}

export function readDriftStatus(dir: string): DriftStatus[] {
  return readJSONList<DriftStatus>(dir, DRIFT_FILE);
}

/** What `apply.json` says; [] when kube-proxy has not applied anything yet. */
export function readApplyStatus(dir: string): ApplyStatus[] {
  return readJSONList<ApplyStatus>(dir, APPLY_FILE);
}

export function listSnapshots(dir: string): RuleSnapshotMeta[] {
  return snapshotFiles(dir).map((f) => {
    const { text: _t, origins: _o, ...meta } = JSON.parse(readFileSync(join(dir, f.file), 'utf8')) as RuleSnapshot;
    return meta;
  });
}

/**
 * The kept snapshots in order, known by their file names (`<seq>-<family>.json`, as `record`
 * writes them) without reading them: pruning and look-ups need no more, and a snapshot of a
 * large table is tens of MB.
 */
function snapshotFiles(dir: string): Array<{ seq: number; family: IPFamily; file: string }> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^\d{6}-IPv[46]\.json$/.test(f))
    .sort()
    .map((file) => ({ seq: Number(file.slice(0, 6)), family: file.slice(7, 11) as IPFamily, file }));
}

/** `@N`, `@latest`, `@latest~K` (K syncs before the latest). */
export function readSnapshot(dir: string, ref: string, family: IPFamily = 'IPv4'): RuleSnapshot {
  const all = snapshotFiles(dir).filter((m) => m.family === family);
  if (all.length === 0) throw kdpError('KDP_NOT_FOUND', `no rule snapshots in ${dir}`);
  const m = /^@(?:(\d+)|latest(?:~(\d+))?)$/.exec(ref);
  if (!m) throw kdpError('KDP_CONFIG', `snapshot "${ref}": write @N, @latest or @latest~K`);
  const meta = m[1] !== undefined
    ? all.find((x) => x.seq === Number(m[1]))
    : all[all.length - 1 - Number(m[2] ?? 0)];
  if (!meta) {
    throw kdpError('KDP_NOT_FOUND', `snapshot ${ref} is not kept (have @${all[0]!.seq}..@${all[all.length - 1]!.seq})`);
  }
  return JSON.parse(readFileSync(join(dir, meta.file), 'utf8')) as RuleSnapshot;
}
