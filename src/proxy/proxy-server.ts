// kube-proxy as the node agent runs it: informers for Services, EndpointSlices and ServiceCIDRs
// feed one pipeline per IP family; a bounded-frequency runner syncs them into an applier
// (in-memory or the kernel); every applied sync is recorded in the rule history. A failed apply
// keeps the previous rules, forces the next sync to be full, and is retried.

import type { EndpointSlice, Node, Service, ServiceCIDR } from '../api/types.js';
import { buildInformerFactory, type InformerFactory } from '../client/informer.js';
import type { Client } from '../client/types.js';
import type { ProxyMode } from './backend.js';
import type { RuleApplier } from './applier.js';
import { DEFAULT_SERVICE_CIDRS } from './compile.js';
import { buildProxierConfigs, parseKubeProxyConfiguration } from './config.js';
import type { RuleHistory } from './history.js';
import { loadBackend } from './compile.js';
import { ProxyPipeline } from './pipeline.js';
import { BoundedFrequencyRunner } from './sync-runner.js';

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
}

export interface KubeProxy {
  start(): Promise<void>;
  stop(): void;
  /** Resolves after a sync that began after this call has been applied (tests, verify). */
  synced(): Promise<void>;
  readonly syncCount: number;
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
  const backend = await loadBackend(configs[0]!.mode);
  const pipelines = configs.map((c) => new ProxyPipeline(backend.buildProxier(c)));
  const informers = deps.informers ?? buildInformerFactory(deps.client);
  const ownInformers = deps.informers === undefined;
  const scale = deps.timeScale ?? 1;
  let syncCount = 0;
  let waiters: Array<() => void> = [];
  // Periodic syncs that change nothing are not worth a history entry.
  const lastDump = new Map<string, string>();

  const syncAll = async () => {
    const done = waiters;
    waiters = [];
    for (const p of pipelines) {
      const result = p.sync();
      try {
        await deps.applier.apply(p.proxier.config.family, result);
        p.commit(true);
        const family = p.proxier.config.family;
        const text = await deps.applier.dump(family);
        if (deps.history && lastDump.get(family) !== text) {
          lastDump.set(family, text);
          deps.history.record({
            mode: p.proxier.mode, family, full: result.full, text,
            origins: Object.fromEntries(result.origins),
          });
        }
      } catch (e) {
        p.commit(false);
        deps.onError?.(e);
        runner.retryAfter(1000 * scale);
        waiters.push(...done);
        return;
      }
    }
    syncCount++;
    for (const w of done) w();
  };
  const runner = new BoundedFrequencyRunner(syncAll, {
    minIntervalMs: configs[0]!.minSyncPeriodMs * scale,
    maxIntervalMs: configs[0]!.syncPeriodMs * scale,
    burst: 2,
  });

  const svc = informers.informerFor<Service>(SERVICES);
  svc.addEventHandler({
    onAdd: (s) => { for (const p of pipelines) p.onService(undefined, s); runner.run(); },
    onUpdate: (o, n) => { for (const p of pipelines) p.onService(o, n); runner.run(); },
    onDelete: (s) => { for (const p of pipelines) p.onService(s, undefined); runner.run(); },
  });
  const eps = informers.informerFor<EndpointSlice>(SLICES);
  eps.addEventHandler({
    onAdd: (s) => { for (const p of pipelines) p.onEndpointSlice(s); runner.run(); },
    onUpdate: (_o, n) => { for (const p of pipelines) p.onEndpointSlice(n); runner.run(); },
    onDelete: (s) => { for (const p of pipelines) p.onEndpointSlice(s, true); runner.run(); },
  });

  return {
    get syncCount() { return syncCount; },
    async start() {
      if (ownInformers) informers.start();
      await Promise.all([svc.waitForSync(), eps.waitForSync()]);
      runner.start();
      runner.run();
    },
    stop() {
      runner.stop();
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
