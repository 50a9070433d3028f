// DST given as a DNS name (`web`, `web.shop`, `kube-dns.kube-system:53`,
// `web.default.svc.cluster.local:http`): resolved as the source pod's resolver would resolve it
// (its namespace's search list, ndots:5) from the cluster DNS's own records, so the trace
// starts where the pod's packet would go: the ClusterIP, or for a headless Service the first
// ready endpoint it is answered.

import { canonicalIP } from '../api/net.js';
import type { Client } from '../client/types.js';
import { loadClusterDns } from '../dns/cluster-view.js';
import { resolveName, searchNames } from '../dns/resolve.js';
import { kdpError } from '../errors.js';
import { parseHostPort } from './packet.js';

/** Name syntax (RFC 1123 labels, at least one letter): not an IP, a pod or a node name. */
export function isDnsName(host: string): boolean {
  if (canonicalIP(host)) return false;
  return /[a-z]/i.test(host) && /^[a-z0-9]([a-z0-9_-]*[a-z0-9])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9])?)*\.?$/i.test(host);
}

export interface DnsDestination {
  readonly ip: string;
  readonly port?: number;
  readonly label: string;
  readonly dns: { readonly name: string; readonly fqdn: string; readonly ips: readonly string[] };
}

export async function resolveDnsDestination(
  client: Client, host: string, portText: string | undefined, namespace: string,
): Promise<DnsDestination> {
  const view = await loadClusterDns(client);
  const o = { namespace, answer: view.answer };
  const r = resolveName(view.index, host, o);
  if (!r) {
    throw kdpError('KDP_TRACE', `DST: "${host}" does not resolve in the cluster DNS (tried ` +
      `${searchNames(host, o).join(', ')}; names outside ${view.config.zone} are not traced by name)`);
  }
  const svc = r.service;
  let port: number | undefined;
  let portLabel = portText;
  if (portText !== undefined && !/^\d+$/.test(portText)) {
    const named = svc?.ports.find((p) => p.name === portText);
    if (!named) throw kdpError('KDP_TRACE', `DST: ${r.fqdn} has no port named "${portText}"`);
    port = named.port;
  } else if (portText !== undefined) {
    port = parseHostPort(`0.0.0.0:${portText}`, 'DST').port;
  } else if (svc?.ports[0] && !svc.headless) {
    port = svc.ports[0].port;
    portLabel = svc.ports[0].name || String(port);
  }
  const ip = r.ips[0]!;
  const what = svc ? `${svc.headless ? 'headless ' : ''}service ${svc.namespace}/${svc.name}` : r.fqdn;
  return { ip, ...(port === undefined ? {} : { port }),
    label: `${what}${portLabel ? `:${portLabel}` : ''} (${host} → ${ip})`,
    dns: { name: host, fqdn: r.fqdn, ips: r.ips } };
}
