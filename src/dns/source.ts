// The live record index: informers (list + watch through the API server, like any client) on
// Services, EndpointSlices and Namespaces — and Pods only for `pods verified`, as CoreDNS —
// rebuilt lazily: a change marks the index stale and tells subscribers (the reply cache), and
// the next question rebuilds it once, however many events came in between.

import type { EndpointSlice } from '../api/types/discovery.js';
import type { Pod } from '../api/types/pod.js';
import type { Service } from '../api/types/service.js';
import { buildInformer, type Informer } from '../client/informer.js';
import type { Client, KubeObject, ResourceRef } from '../client/types.js';
import type { IndexSource } from './handler.js';
import type { PodMode } from './lookup.js';
import { buildDnsIndex, type DnsIndex } from './records.js';

export const DNS_RESOURCES = {
  services: { group: '', version: 'v1', resource: 'services' },
  endpointSlices: { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces' },
  pods: { group: '', version: 'v1', resource: 'pods' },
} as const satisfies Record<string, ResourceRef>;

export interface LiveSource extends IndexSource {
  start(): void;
  stop(): void;
  hasSynced(): boolean;
  /** Resolves once every informer has listed (or after `timeoutMs`, false then). */
  waitForSync(timeoutMs: number): Promise<boolean>;
}

export interface LiveSourceOptions {
  readonly zone: string;
  readonly pods: PodMode;
  readonly onError?: (err: unknown) => void;
}

export function buildLiveSource(client: Client, o: LiveSourceOptions): LiveSource {
  const opts = { onError: o.onError };
  const services = buildInformer<Service>(client, DNS_RESOURCES.services, opts);
  const slices = buildInformer<EndpointSlice>(client, DNS_RESOURCES.endpointSlices, opts);
  const namespaces = buildInformer<KubeObject>(client, DNS_RESOURCES.namespaces, opts);
  const pods = o.pods === 'verified' ? buildInformer<Pod>(client, DNS_RESOURCES.pods, opts) : undefined;
  const all: Informer<KubeObject>[] = [services, slices, namespaces, ...(pods ? [pods] : [])] as
    unknown as Informer<KubeObject>[];
  const listeners = new Set<() => void>();
  let index: DnsIndex | undefined;
  let serial = Math.floor(Date.now() / 1000);
  const changed = () => {
    index = undefined;
    serial = Math.floor(Date.now() / 1000);
    for (const l of listeners) l();
  };
  for (const inf of all) {
    inf.addEventHandler({ onAdd: changed, onUpdate: (a, b) => { if (a !== b) changed(); },
      onDelete: changed });
  }
  const hasSynced = () => all.every((i) => i.hasSynced());
  return {
    current() {
      if (!index || (!index.synced && hasSynced())) {
        index = { ...buildDnsIndex({ services: services.cache.list(),
          endpointSlices: slices.cache.list(), namespaces: namespaces.cache.list(),
          pods: pods?.cache.list() }, o.zone, serial), synced: hasSynced() };
      }
      return index;
    },
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    start: () => { for (const i of all) i.start(); },
    stop: () => { for (const i of all) i.stop(); },
    hasSynced,
    async waitForSync(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((r) => { timer = setTimeout(() => r(false), timeoutMs); });
      const synced = Promise.all(all.map((i) => i.waitForSync())).then(() => true as const);
      const ok = await Promise.race([synced, timeout]);
      clearTimeout(timer);
      if (ok) changed();
      return ok;
    },
  };
}
