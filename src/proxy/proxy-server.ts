// kube-proxy as the node agent runs it: informers for Services, EndpointSlices and ServiceCIDRs
// feed one pipeline per IP family; a bounded-frequency runner syncs them into an applier
// (in-memory or the kernel); every applied sync is recorded in the rule history. A failed apply
// keeps the previous rules, forces the next sync to be full, and is retried with back-off
// (1 s doubling to 30 s, scaled). With a kernel applier the kernel's tables are read back after
// each apply and every `driftCheckMs`, and compared with what was compiled: drift is logged,
// recorded as a Node Event (KubeProxyRuleDrift) and in the history dir's drift.json, and healed
// by re-applying what was compiled (once per distinct drift: one that survives is reported).
// A failed apply is reported the same way: log (onError), Node Event KubeProxyApplyFailed (kdp's
// own: upstream only logs and counts sync_proxy_rules_iptables_restore_failures_total) and the
// history dir's apply.json, until a later apply succeeds. Objects the change trackers leave out
// as invalid are logged once per change; a Service left out (whole, or a port of it) also gets
// a Warning Event KubeProxyInvalidService (both in sync-reports.ts).

import { buildKubeProxyMetrics, type KubeProxyMetrics } from './metrics.js';
import type { EndpointSlice, Node, Service, ServiceCIDR } from '../api/types.js';
import { buildInformerFactory, type InformerFactory } from '../client/informer.js';
import type { Client } from '../client/types.js';
import type { ProxyMode } from './backend.js';
import type { RuleApplier } from './applier.js';
import { availableParallelism } from 'node:os';
import { kubeProxySysctls } from './sysctls.js';
import { DEFAULT_SERVICE_CIDRS } from './compile.js';
import { buildProxierConfigs, parseKubeProxyConfiguration } from './config.js';
import type { RuleHistory } from './history.js';
import { buildSampler } from './metric-samples.js';
import { loadBackend } from './compile.js';
import { ProxyPipeline } from './pipeline.js';
import { BoundedFrequencyRunner } from './sync-runner.js';
import { buildEventRecorder, type EventRecorder } from '../client/events.js';
import type { ApplyStatus, DriftStatus } from './history.js';
import type { InputProblem } from './input-check.js';
import { buildApplyTracker, tellProblems } from './sync-reports.js';
import type { IPFamily } from './types.js';
import type { KubeObject } from '../client/types.js';

const SERVICES = { group: '', version: 'v1', resource: 'services' } as const;
const SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' } as const;
const CIDRS = { group: 'networking.k8s.io', version: 'v1', resource: 'servicecidrs' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

export interface KubeProxyDeps {
  readonly client: Client;
  readonly nodeName: string;
  readonly nodeIPs: readonly string[];
  readonly applier: RuleApplier;
  readonly history?: RuleHistory;
  /** KubeProxyConfiguration YAML; its mode is overridden by `mode` when given. */
  readonly configText?: string;
  readonly mode?: ProxyMode;
  readonly capabilities?: { randomFully?: boolean; nfacct?: boolean };
  /** Shared informers of the process (in-process `kdp up`); default: its own. */
  readonly informers?: InformerFactory;
  /** Multiplies the sync periods (as every component's `timeScale`: 0.1 = ten times faster). */
  readonly timeScale?: number;
  readonly onError?: (err: unknown) => void;
  /** Warnings (rule drift, invalid objects left out, recovery), one line each. */
  readonly log?: (line: string) => void;
  /** How often the kernel is compared with the compiled rules between syncs; default 30 s
   *  (× timeScale); 0: only after applies. Only for appliers with `drift`. */
  readonly driftCheckMs?: number;
  /** Record Events: KubeProxyRuleDrift, KubeProxyApplyFailed, KubeProxyInvalidService
   *  (default true). */
  readonly events?: boolean;
  /** Per applied sync: when (performance.now()) it began, was compiled, applied, read back and
   *  drift-checked (benchmarks: where programming latency goes). */
  readonly onSyncTiming?: (t: SyncTiming) => void;
}

export interface SyncTiming {
  readonly family: IPFamily;
  readonly full: boolean;
  readonly start: number;
  readonly compiled: number;
  readonly applied: number;
  readonly checked: number;
}

export interface KubeProxy {
  start(): Promise<void>;
  stop(): void;
  /** Resolves after a sync that began after this call has been applied (tests, verify). */
  synced(): Promise<void>;
  readonly syncCount: number;
  /** What the last drift check found, per family. */
  driftStatus(): DriftStatus[];
  /** How the applies went, per family (failing or not, failures in a row, last error). */
  applyStatus(): ApplyStatus[];
  /** Upstream's kube-proxy metrics (served on metricsBindAddress, `/metrics`). */
  readonly metrics: KubeProxyMetrics;
  /** The configuration's metricsBindAddress. */
  readonly metricsAddress: { readonly host: string; readonly port: number };
}

export async function buildKubeProxy(deps: KubeProxyDeps): Promise<KubeProxy> {
  const settings = parseKubeProxyConfiguration(deps.configText);
  const node = await deps.client.get<Node>(NODES, deps.nodeName).catch(() => undefined);
  const cidrList = await deps.client.list<ServiceCIDR>(CIDRS).catch(() => ({ items: [] as ServiceCIDR[] }));
  const serviceCIDRs = cidrList.items.flatMap((c) => c.spec?.cidrs ?? []);
  const configs = buildProxierConfigs(settings, {
    nodeName: deps.nodeName,
    nodeIPs: deps.nodeIPs,
    podCIDRs: node?.spec?.podCIDRs ?? [],
    labels: node?.metadata?.labels ?? {},
    capabilities: deps.capabilities,
    ...(deps.mode ? { mode: deps.mode } : {}),
  }, serviceCIDRs.length ? serviceCIDRs : DEFAULT_SERVICE_CIDRS);
  // Upstream sets its sysctls once at start, before the proxier's first sync.
  if (deps.applier.setSysctls) {
    const problems = await deps.applier.setSysctls(kubeProxySysctls({
      mode: configs[0]!.mode, conntrack: settings.conntrack, cores: availableParallelism(),
      localhostNodePorts: configs.some((c) => c.family === 'IPv4' && c.localhostNodePorts),
    }));
    for (const p of problems) deps.log?.(`kube-proxy ${deps.nodeName}: sysctl ${p}`);
  }
  const backend = await loadBackend(configs[0]!.mode);
  const recorder = buildEventRecorder(deps.client, {
    component: 'kube-proxy', host: deps.nodeName, enabled: deps.events ?? true,
  });
  const nodeRef: KubeObject = { apiVersion: 'v1', kind: 'Node',
    metadata: { name: deps.nodeName, uid: node?.metadata.uid ?? deps.nodeName } };
  // Problems the trackers of every family report for one event, told once (see `told`).
  const problems: InputProblem[] = [];
  const pipelines = configs.map((c) =>
    new ProxyPipeline(backend.buildProxier(c), (p) => problems.push(p)));
  const told = (obj: KubeObject | undefined) => tellProblems(deps, recorder, problems, obj);
  const informers = deps.informers ?? buildInformerFactory(deps.client);
  const ownInformers = deps.informers === undefined;
  const scale = deps.timeScale ?? 1;
  let syncCount = 0;
  let waiters: Array<() => void> = [];
  // Periodic syncs that change nothing are not worth a history entry.
  const lastDump = new Map<string, string>();
  const drift = buildDriftTracker(deps, recorder, nodeRef);
  const applies = buildApplyTracker(deps, recorder, nodeRef);
  let failures = 0;
  const metrics = buildKubeProxyMetrics(configs[0]!.mode);
  // The latency metrics' recent samples beside the rule history (the web UI plots them).
  const history = deps.history;
  const sampler = history ? buildSampler(metrics.registry, (s) => history.recordMetrics(s), 1000 * scale,
    (e) => deps.onError?.(e)) : undefined;
  /** Trigger times of EndpointSlice changes not yet in the kernel (network programming latency). */
  let triggers: number[] = [];
  // Syncs and drift checks never overlap (a check must not read a half-applied kernel).
  let lock: Promise<unknown> = Promise.resolve();
  const locked = <T>(fn: () => Promise<T>): Promise<T> => {
    const r = lock.then(fn);
    lock = r.catch(() => undefined);
    return r;
  };

  const syncAll = () => locked(async () => {
    const done = waiters;
    waiters = [];
    for (const p of pipelines) {
      const family = p.proxier.config.family;
      const start = performance.now();
      const result = p.sync();
      const compiled = performance.now();
      try {
        await applies.track(family, deps.applier.apply(family, result));
        const applied = performance.now();
        metrics.sync((applied - start) / 1000, result.full, Date.now());
        p.commit(true);
        const text = await deps.applier.dump(family);
        await drift.check(family, text);
        deps.onSyncTiming?.({ family, full: result.full, start, compiled, applied, checked: performance.now() });
        if (deps.history && lastDump.get(family) !== text) {
          lastDump.set(family, text);
          deps.history.record({
            mode: p.proxier.mode, family, full: result.full, text,
            origins: Object.fromEntries(result.origins),
          });
        }
      } catch (e) {
        p.commit(false);
        metrics.syncFailed();
        deps.onError?.(e);
        failures++;
        runner.retryAfter(Math.min(1000 * 2 ** (failures - 1), 30_000) * scale);
        waiters.push(...done);
        return;
      }
    }
    failures = 0;
    syncCount++;
    const now = Date.now();
    for (const t of triggers) metrics.programmed(t, now);
    triggers = [];
    sampler?.changed();
    for (const w of done) w();
  });
  const runner = new BoundedFrequencyRunner(syncAll, {
    minIntervalMs: configs[0]!.minSyncPeriodMs * scale,
    maxIntervalMs: configs[0]!.syncPeriodMs * scale,
    burst: 2,
  });

  // Upstream's network programming latency starts at the change the EndpointSlice controller
  // stamped on the slice (endpoints.kubernetes.io/last-change-trigger-time).
  const sliceChanged = (s: EndpointSlice) => {
    metrics.endpointsChanged();
    const t = Date.parse(s.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time'] ?? '');
    if (Number.isFinite(t)) triggers.push(t);
  };
  const svc = informers.informerFor<Service>(SERVICES);
  const unsubscribe: Array<() => void> = [];
  unsubscribe.push(svc.addEventHandler({
    onAdd: (s) => { for (const p of pipelines) p.onService(undefined, s); told(s); metrics.serviceChanged(); runner.run(); },
    onUpdate: (o, n) => { for (const p of pipelines) p.onService(o, n); told(n); metrics.serviceChanged(); runner.run(); },
    onDelete: (s) => { for (const p of pipelines) p.onService(s, undefined); metrics.serviceChanged(); runner.run(); },
  }));
  const eps = informers.informerFor<EndpointSlice>(SLICES);
  unsubscribe.push(eps.addEventHandler({
    onAdd: (s) => {
      for (const p of pipelines) p.onEndpointSlice(s);
      told(undefined);
      sliceChanged(s);
      runner.run();
    },
    onUpdate: (_o, n) => {
      for (const p of pipelines) p.onEndpointSlice(n);
      told(undefined);
      sliceChanged(n);
      runner.run();
    },
    onDelete: (s) => { for (const p of pipelines) p.onEndpointSlice(s, true); metrics.endpointsChanged(); runner.run(); },
  }));

  const checkEvery = deps.driftCheckMs ?? 30_000 * scale;
  let checkTimer: NodeJS.Timeout | undefined;
  let checking = false;
  const periodicCheck = () => {
    if (checking) return; // a slow check is not queued behind itself
    checking = true;
    locked(async () => {
      for (const p of pipelines) await drift.check(p.proxier.config.family);
    }).catch((e) => deps.onError?.(e)).finally(() => { checking = false; });
  };

  return {
    get syncCount() { return syncCount; },
    metrics,
    metricsAddress: settings.metricsBindAddress,
    driftStatus: () => drift.statuses(),
    applyStatus: () => applies.statuses(),
    async start() {
      if (ownInformers) informers.start();
      await Promise.all([svc.waitForSync(), eps.waitForSync()]);
      runner.start();
      runner.run();
      if (deps.applier.drift && checkEvery > 0) {
        checkTimer = setInterval(periodicCheck, checkEvery);
        checkTimer.unref?.();
      }
    },
    stop() {
      // Every loop it started ends here: no sync, retry or drift check runs after stop().
      runner.stop();
      sampler?.stop();
      for (const u of unsubscribe.splice(0)) u();
      clearInterval(checkTimer);
      if (ownInformers) informers.stop();
    },
    synced() {
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        runner.run();
      });
    },
  };
}

interface DriftTracker {
  /** Compares the kernel (its dump, when at hand) with the compiled rules; reports and heals. */
  check(family: IPFamily, kernelDump?: string): Promise<void>;
  statuses(): DriftStatus[];
}

function buildDriftTracker(deps: KubeProxyDeps, recorder: EventRecorder,
  node: KubeObject): DriftTracker {
  const status = new Map<IPFamily, DriftStatus>();
  /** The drift each family last re-applied for: the same drift again is not healed again. */
  const healedFor = new Map<IPFamily, string>();
  const iso = () => new Date().toISOString();

  async function check(family: IPFamily, kernelDump?: string, healing = false): Promise<void> {
    if (!deps.applier.drift) return;
    const diffs = await deps.applier.drift(family, kernelDump);
    const prev = status.get(family);
    const now = iso();
    if (diffs.length === 0) {
      healedFor.delete(family);
      status.set(family, { ...(prev ?? { family, drifts: 0 }), checkedAt: now, inSync: true,
        ...(prev && !prev.inSync ? { healedAt: now } : {}) });
      if (prev && !prev.inSync) deps.log?.(`kube-proxy ${deps.nodeName}: ${family} kernel rules back in sync`);
      deps.history?.recordDrift([...status.values()]);
      return;
    }
    const key = diffs.join('\n');
    const again = healing || healedFor.get(family) === key;
    status.set(family, {
      family, checkedAt: now, inSync: false, drifts: (prev?.drifts ?? 0) + (prev?.inSync === false ? 0 : 1),
      lastDrift: { time: now, count: diffs.length, differences: diffs.slice(0, 20) },
    });
    deps.history?.recordDrift([...status.values()]);
    const msg = `${family} kernel rules differ from the compiled ${deps.applier.mode} rules ` +
      `(${diffs.length} difference${diffs.length === 1 ? '' : 's'}; first: ${diffs[0]})` +
      (again ? '; still there after re-applying' : '; re-applying');
    deps.log?.(`kube-proxy ${deps.nodeName}: ${msg}`);
    recorder.event(node, 'Warning', 'KubeProxyRuleDrift', msg);
    if (again || !deps.applier.restore) return;
    healedFor.set(family, key);
    await deps.applier.restore(family);
    await check(family, undefined, true);
  }

  return {
    check: (family, dump) => check(family, dump),
    statuses: () => [...status.values()],
  };
}

