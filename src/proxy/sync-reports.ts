// What kube-proxy tells about itself beyond its rules: how each family's applies go (ApplyStatus,
// kept in the rule history's apply.json, and a Node Event on failure), and the objects its change
// trackers left out as invalid (log lines, and a Service Event). Both reasons are kdp's own:
// upstream kube-proxy only logs a failed restore (and counts it in the metric
// sync_proxy_rules_iptables_restore_failures_total), and its API server never stores the
// invalid objects kdp's store may hold.

import type { KubeObject } from '../client/types.js';
import type { EventRecorder } from '../client/events.js';
import type { RuleApplier } from './applier.js';
import type { ApplyStatus, RuleHistory } from './history.js';
import type { InputProblem } from './input-check.js';
import type { IPFamily } from './types.js';

/** Node Event reason of a failed apply. */
export const REASON_APPLY_FAILED = 'KubeProxyApplyFailed';
/** Service Event reason when kube-proxy leaves a Service, or one of its ports, out. */
export const REASON_INVALID_SERVICE = 'KubeProxyInvalidService';

/** The parts of kube-proxy's dependencies the reports use. */
export interface ReportDeps {
  readonly nodeName: string;
  readonly applier: Pick<RuleApplier, 'mode'>;
  readonly history?: Pick<RuleHistory, 'recordApply'>;
  readonly log?: (line: string) => void;
}

const iso = () => new Date().toISOString();

/** How much of an applier's error is kept (a restore's stderr can be long). */
const MAX_ERROR_CHARS = 2000;

export interface ApplyTracker {
  /** Settles as `apply` does, after recording its outcome for `family`. */
  track(family: IPFamily, apply: Promise<void>): Promise<void>;
  statuses(): ApplyStatus[];
}

/** Keeps ApplyStatus per family; apply.json is written when a family's state changes. */
export function buildApplyTracker(deps: ReportDeps, recorder: EventRecorder,
  node: KubeObject): ApplyTracker {
  const status = new Map<IPFamily, ApplyStatus>();
  const save = () => deps.history?.recordApply([...status.values()]);
  const tracker = {
    applied(family: IPFamily) {
      const prev = status.get(family);
      if (prev && !prev.failed) return;
      status.set(family, { family, failed: false, failures: 0, since: iso(),
        ...(prev?.lastError ? { lastError: prev.lastError } : {}) });
      save();
      if (prev) {
        deps.log?.(`kube-proxy ${deps.nodeName}: ${family} rules applied again after ` +
          `${prev.failures} failed attempt${prev.failures === 1 ? '' : 's'}`);
      }
    },
    failed(family: IPFamily, err: unknown) {
      const prev = status.get(family);
      const now = iso();
      const text = err instanceof Error ? err.message : String(err);
      const message = text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
      status.set(family, { family, failed: true, failures: prev?.failed ? prev.failures + 1 : 1,
        since: prev?.failed ? prev.since : now, lastError: { time: now, message } });
      save();
      recorder.event(node, 'Warning', REASON_APPLY_FAILED, `${family} ${deps.applier.mode} ` +
        `rules could not be applied; the previous rules stay in force: ${message}`);
    },
  };
  return {
    async track(family, apply) {
      try {
        await apply;
      } catch (e) {
        tracker.failed(family, e);
        throw e;
      }
      tracker.applied(family);
    },
    statuses: () => [...status.values()],
  };
}

/** The object part of a problem's log line. */
function problemLine(p: InputProblem): string {
  const what = p.skipped === 'object' ? 'left out' : `${p.skipped} left out`;
  return `${p.kind} ${p.namespace}/${p.name}: ${what}: ${p.message}`;
}

/**
 * Logs each distinct problem the trackers of all families reported for one event (a dual-stack
 * proxy checks every object twice) and empties `problems`; a Service left out, whole or a
 * port of it, also gets a Warning Event.
 */
export function tellProblems(deps: ReportDeps, recorder: EventRecorder, problems: InputProblem[],
  obj: KubeObject | undefined): void {
  if (problems.length === 0) return;
  const lines = new Set(problems.map(problemLine));
  const events = new Set(problems.filter((p) => p.kind === 'Service' && p.skipped !== 'entry')
    .map((p) => (p.skipped === 'object' ? 'no rules' : 'a port has no rules') + `: ${p.message}`));
  problems.length = 0;
  for (const l of lines) deps.log?.(`kube-proxy ${deps.nodeName}: ${l}`);
  const md = obj?.metadata;
  if (!md || typeof md.name !== 'string' || typeof (md.namespace ?? '') !== 'string') return;
  for (const m of events) recorder.event(obj!, 'Warning', REASON_INVALID_SERVICE, m);
}
