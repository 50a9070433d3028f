// The cluster's DNS as its clients see it, read once from the API: the addon's Corefile (its
// `coredns` ConfigMap; the kubernetes plugin's defaults without the addon) and the record index
// of its Services, EndpointSlices and Namespaces. `kdp dns lookup`, `kdp trace POD NAME` and
// `kdp verify`'s DNS check answer from it with the same code the DNS pods run.

import type { EndpointSlice } from '../api/types/discovery.js';
import type { Service } from '../api/types/service.js';
import type { Client, KubeObject } from '../client/types.js';
import type { AnswerOptions } from './answer.js';
import { DEFAULT_SERVE_CONFIG, parseCorefile, type DnsServeConfig } from './corefile.js';
import { buildDnsIndex, type DnsIndex } from './records.js';
import { DNS_RESOURCES } from './source.js';

export interface ClusterDnsView {
  readonly config: DnsServeConfig;
  readonly index: DnsIndex;
  readonly answer: AnswerOptions;
  /** Whether the cluster runs the DNS addon (the `kube-system/coredns` ConfigMap exists). */
  readonly addon: boolean;
}

/** The cluster's DNS configuration: its `coredns` ConfigMap when there is one. */
export async function clusterDnsConfig(client: Client): Promise<{ config: DnsServeConfig; addon: boolean }> {
  try {
    const cm = await client.get<KubeObject & { data?: Record<string, string> }>(
      { group: '', version: 'v1', resource: 'configmaps', namespace: 'kube-system' }, 'coredns');
    if (cm.data?.Corefile) return { config: parseCorefile(cm.data.Corefile), addon: true };
  } catch {
    // no addon (--no-dns) or no access: the plugin's defaults
  }
  return { config: DEFAULT_SERVE_CONFIG, addon: false };
}

export function answerOptionsOf(config: DnsServeConfig): AnswerOptions {
  return { zone: config.zone, ttl: config.ttl, pods: config.pods, reverseZones: config.reverseZones };
}

/** The view over objects the caller has already listed (`services`, `slices`; the namespaces
 *  are read here). */
export async function clusterDnsOf(
  client: Client, services: readonly Service[], slices: readonly EndpointSlice[], now = Date.now(),
): Promise<ClusterDnsView> {
  const [{ config, addon }, namespaces] = await Promise.all([clusterDnsConfig(client),
    client.list(DNS_RESOURCES.namespaces)]);
  const index = buildDnsIndex({ services, endpointSlices: slices, namespaces: namespaces.items },
    config.zone, Math.floor(now / 1000));
  return { config, index, answer: answerOptionsOf(config), addon };
}

export async function loadClusterDns(client: Client, now = Date.now()): Promise<ClusterDnsView> {
  const [services, slices] = await Promise.all([
    client.list<Service>(DNS_RESOURCES.services), client.list<EndpointSlice>(DNS_RESOURCES.endpointSlices)]);
  return clusterDnsOf(client, services.items, slices.items, now);
}
