// The node's kube-proxy as its kube-proxy pod runs it: what the kubelet starts for a pod of the
// kube-proxy image (host-components.ts). The configuration is the pod's own --config file, read
// from the ConfigMap volume mounted over it (kubeadm: kube-system/kube-proxy, key config.conf),
// its mode the file's. At start, as upstream: the other modes' rules are removed (kernel:
// proxy/kernel-leftovers.ts; virtual: their in-memory tables dropped); then the first sync is full.
// At stop nothing is flushed: the node keeps its rules until the next kube-proxy replaces them.
// In netns mode /metrics and /healthz are served in the node's namespace on the configured
// addresses; the pod is Ready while /healthz is healthy (healthz-server.ts).

import type { Pod } from '../../api/types.js';
import type { Client } from '../../client/types.js';
import type { InformerFactory } from '../../client/informer.js';
import { kdpError } from '../../errors.js';
import { cleanupOtherModes } from '../../proxy/kernel-leftovers.js';
import { assertKernelMode, buildKernelApplier } from '../../proxy/kernel-applier.js';
import type { HostComponent } from '../../kubelet/host-components.js';
import { buildMemoryApplier, type RuleApplier } from '../../proxy/applier.js';
import type { ProxyMode } from '../../proxy/backend.js';
import { parseKubeProxyConfiguration } from '../../proxy/config.js';
import { buildProxyHealth, healthzAddress, serveHealthz } from '../../proxy/healthz-server.js';
import { RuleHistory, rulesDir } from '../../proxy/history.js';
import { serveMetrics } from '../../proxy/metrics-server.js';
import { buildKubeProxy } from '../../proxy/proxy-server.js';
import type { NetnsDataPlane } from '../data-plane-netns.js';
import { kubeProxyConfigSource } from './kube-proxy.js';

export interface KubeProxyComponentDeps {
  readonly nodeName: string;
  readonly nodeIPs: readonly string[];
  /** kube-proxy's own client (its node identity). */
  readonly client: Client;
  /** A ConfigMap's data as the kubelet reads it for a pod's volume; undefined: not found. */
  readonly configMap: (namespace: string, name: string) => Promise<Record<string, string> | undefined>;
  readonly informers: InformerFactory;
  readonly dataDir: string;
  readonly timeScale: number;
  readonly onError: (err: unknown) => void;
  readonly log?: (line: string) => void;
  /** netns mode: the kernel of the node's namespace. */
  readonly netns?: NetnsDataPlane;
}

export function kubeProxyComponent(d: KubeProxyComponentDeps): HostComponent {
  // Per mode, what holds the node's rules: they outlive a kube-proxy (a restart keeps them).
  const appliers = new Map<ProxyMode, RuleApplier>();
  const netns = d.netns;
  const nodeNetns = netns?.topo.nodeNetns(d.nodeName);
  return {
    async start(pod: Pod, log) {
      const src = kubeProxyConfigSource(pod);
      const data = await d.configMap(pod.metadata.namespace ?? 'kube-system', src.configMap);
      if (!data) throw kdpError('KDP_NOT_FOUND', `configmap "${src.configMap}" not found`);
      const text = data[src.key];
      if (text === undefined) {
        throw kdpError('KDP_CONFIG', `configmap "${src.configMap}" has no key ${src.key} (the pod's --config file)`);
      }
      const settings = parseKubeProxyConfiguration(text);
      const mode = settings.mode;
      if (netns) assertKernelMode(mode);
      log(`I Using ${mode} Proxier (config ${src.configMap}/${src.key})`);
      for (const m of [...appliers.keys()]) if (m !== mode) appliers.delete(m);
      if (netns && nodeNetns) {
        for (const p of await cleanupOtherModes(netns.exec, nodeNetns, mode)) log(`E ${p}`);
      }
      const applier = appliers.get(mode) ?? (netns && nodeNetns ? buildKernelApplier(netns.exec, nodeNetns, mode)
        : buildMemoryApplier(mode));
      appliers.set(mode, applier);
      const health = buildProxyHealth(2 * settings.syncPeriodMs * d.timeScale);
      const tracked: RuleApplier = { ...applier,
        async apply(family, result) { await applier.apply(family, result); health.updated(); } };
      const proxy = await buildKubeProxy({
        client: d.client, nodeName: d.nodeName, nodeIPs: d.nodeIPs, configText: text, applier: tracked,
        history: new RuleHistory(rulesDir(d.dataDir, d.nodeName)), informers: d.informers, timeScale: d.timeScale,
        onError: (e) => { log(`E ${(e as Error).message}`); d.onError(e); }, log: (l) => { log(`W ${l}`); d.log?.(l); },
      });
      const closers: Array<() => void> = [];
      try {
        await proxy.start();
        if (netns) {
          const m = proxy.metricsAddress;
          if (m.port > 0) closers.push(serveMetrics(await netns.listenInNode(d.nodeName, m.host, m.port), proxy.metrics.registry));
          const h = healthzAddress(text);
          if (h.port > 0) closers.push(serveHealthz(await netns.listenInNode(d.nodeName, h.host, h.port), health));
        }
      } catch (e) {
        proxy.stop();
        for (const c of closers) c();
        throw e;
      }
      log(`I kube-proxy started on node ${d.nodeName} (${mode})`);
      return {
        ready: () => health.check().healthy,
        async stop() {
          proxy.stop();
          for (const c of closers) c();
        },
      };
    },
  };
}
