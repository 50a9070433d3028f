// The files the kubelet gives every pod: /etc/resolv.conf per dnsPolicy and dnsConfig (upstream
// pkg/kubelet/network/dns/dns.go GetPodDNS, written in containerd's order: search, nameserver,
// options) and /etc/hosts (pkg/kubelet/kubelet_pods.go managedHostsFileContent), and the pod's
// hostname and domain (GeneratePodHostNameAndDomain). Pure: the host's resolv.conf is passed in.

import type { Pod } from '../api/types.js';

/** The kubelet's DNS settings (`clusterDNS`, `clusterDomain`, `--resolv-conf`'s text). */
export interface KubeletDnsConfig {
  /** The cluster DNS Service's IPs (kubeadm: the tenth address of the service CIDR). */
  readonly clusterDNS: readonly string[];
  /** `cluster.local` by default; empty: no cluster search domains. */
  readonly clusterDomain: string;
  /** The text of the node's resolv.conf (`--resolv-conf`); undefined as `--resolv-conf=""`. */
  readonly hostResolvConf?: string;
  /** The node's IPs: with `--resolv-conf=""` the Default policy answers from localhost of
   *  their families. */
  readonly nodeIPs?: readonly string[];
}

/** The resolver settings the kubelet hands the runtime (runtimeapi.DNSConfig). */
export interface PodDnsSettings {
  readonly servers: string[];
  readonly searches: string[];
  readonly options: string[];
  /** Why something was dropped or defaulted (upstream's DNSConfigForming / MissingClusterDNS). */
  readonly warnings: string[];
}

/** upstream validation.MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars. */
export const MAX_NAMESERVERS = 3;
export const MAX_SEARCH_PATHS = 32;
export const MAX_SEARCH_CHARS = 2048;
const DEFAULT_OPTIONS = ['ndots:5'];

/** parseResolvConf: every nameserver, the last search line (without `.` and trailing dots),
 *  every option. */
export function parseResolvConf(text: string): { servers: string[]; searches: string[]; options: string[] } {
  const servers: string[] = [];
  let searches: string[] = [];
  const options: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const f = line.split(/\s+/).filter(Boolean);
    if (!f.length) continue;
    if (f[0] === 'nameserver' && f[1]) servers.push(f[1]);
    else if (f[0] === 'search') {
      searches = f.slice(1).filter((s) => s !== '.').map((s) => s.replace(/\.+$/, ''));
    } else if (f[0] === 'options') options.push(...f.slice(1));
  }
  return { servers, searches, options };
}

const unique = (xs: readonly string[]): string[] => [...new Set(xs)];

/** Options merged by name, later ones winning, in first-seen order (upstream's map has none). */
function mergeOptions(base: readonly string[], pod: readonly { name?: string; value?: string }[]): string[] {
  const m = new Map<string, string>();
  for (const o of base) {
    const i = o.indexOf(':');
    m.set(i < 0 ? o : o.slice(0, i), i < 0 ? '' : o.slice(i + 1));
  }
  for (const o of pod) if (o.name) m.set(o.name, o.value ?? '');
  return [...m].map(([k, v]) => (v ? `${k}:${v}` : k));
}

type DnsType = 'none' | 'cluster' | 'host';

function dnsType(pod: Pod): DnsType {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  if (policy === 'None') return 'none';
  if (policy === 'ClusterFirstWithHostNet') return 'cluster';
  if (policy === 'ClusterFirst') return pod.spec?.hostNetwork ? 'host' : 'cluster';
  return 'host';
}

/** GetPodDNS: the pod's resolver settings. */
export function podDnsSettings(pod: Pod, cfg: KubeletDnsConfig): PodDnsSettings {
  const warnings: string[] = [];
  const host = cfg.hostResolvConf === undefined ? { servers: [], searches: [], options: [] } :
    parseResolvConf(cfg.hostResolvConf);
  let servers = host.servers;
  let searches = host.searches;
  let options = host.options;
  let type = dnsType(pod);
  if (type === 'none') { servers = []; searches = []; options = []; }
  if (type === 'cluster') {
    if (cfg.clusterDNS.length) {
      servers = [...cfg.clusterDNS];
      const ns = pod.metadata.namespace ?? 'default';
      searches = cfg.clusterDomain ? unique([`${ns}.svc.${cfg.clusterDomain}`,
        `svc.${cfg.clusterDomain}`, cfg.clusterDomain, ...host.searches]) : host.searches;
      options = [...DEFAULT_OPTIONS];
    } else {
      warnings.push('kubelet does not have ClusterDNS IP configured and cannot create Pod using ' +
        '"ClusterFirst" policy. Falling back to "Default" policy.');
      type = 'host';
    }
  }
  if (type === 'host' && cfg.hostResolvConf === undefined) {
    servers = unique((cfg.nodeIPs ?? []).map((ip) => (ip.includes(':') ? '::1' : '127.0.0.1')));
    if (!servers.length) servers = ['127.0.0.1'];
    searches = ['.'];
  }
  const dc = pod.spec?.dnsConfig;
  if (dc) {
    servers = unique([...servers, ...(dc.nameservers ?? [])]);
    searches = unique([...searches, ...(dc.searches ?? [])]);
    options = mergeOptions(options, dc.options ?? []);
  }
  if (servers.length > MAX_NAMESERVERS) {
    servers = servers.slice(0, MAX_NAMESERVERS);
    warnings.push('Nameserver limits were exceeded, some nameservers have been omitted, ' +
      `the applied nameserver line is: ${servers.join(' ')}`);
  }
  let trimmed = false;
  if (searches.length > MAX_SEARCH_PATHS) { searches = searches.slice(0, MAX_SEARCH_PATHS); trimmed = true; }
  while (searches.length && searches.join(' ').length > MAX_SEARCH_CHARS) { searches.pop(); trimmed = true; }
  if (trimmed) {
    warnings.push('Search Line limits were exceeded, some search paths have been omitted, ' +
      `the applied search line is: ${searches.join(' ')}`);
  }
  return { servers, searches, options, warnings };
}

/** The resolv.conf containerd writes from the settings: search, nameservers, options. */
export function formatResolvConf(s: Pick<PodDnsSettings, 'servers' | 'searches' | 'options'>): string {
  let text = '';
  if (s.searches.length) text += `search ${s.searches.join(' ')}\n`;
  if (s.servers.length) text += `nameserver ${s.servers.join('\nnameserver ')}\n`;
  if (s.options.length) text += `options ${s.options.join(' ')}\n`;
  return text;
}

export function renderResolvConf(pod: Pod, cfg: KubeletDnsConfig): string {
  return formatResolvConf(podDnsSettings(pod, cfg));
}

/** GeneratePodHostNameAndDomain: `spec.hostname` or the name, cut to 63 characters without a
 *  trailing `-`/`.`; the domain `<subdomain>.<ns>.svc.<clusterDomain>` when a subdomain is set. */
export function podHostname(pod: Pod, clusterDomain: string): { hostname: string; domain?: string } {
  let hostname = pod.spec?.hostname || pod.metadata.name || '';
  if (hostname.length > 63) hostname = hostname.slice(0, 63).replace(/[-.]+$/, '');
  const sub = pod.spec?.subdomain;
  const domain = sub ? `${sub}.${pod.metadata.namespace ?? 'default'}.svc.${clusterDomain}` : undefined;
  return domain ? { hostname, domain } : { hostname };
}

/** The kernel hostname: the FQDN with setHostnameAsFQDN (and a domain), else the short name. */
export function podKernelHostname(pod: Pod, clusterDomain: string): string {
  const { hostname, domain } = podHostname(pod, clusterDomain);
  return pod.spec?.setHostnameAsFQDN && domain ? `${hostname}.${domain}` : hostname;
}

/** managedHostsFileContent, for a pod on the pod network. */
export function renderHosts(pod: Pod, podIPs: readonly string[], clusterDomain = 'cluster.local'): string {
  const { hostname, domain } = podHostname(pod, clusterDomain);
  let text = '# Kubernetes-managed hosts file.\n' +
    '127.0.0.1\tlocalhost\n' +
    '::1\tlocalhost ip6-localhost ip6-loopback\n' +
    'fe00::0\tip6-localnet\n' +
    'fe00::0\tip6-mcastprefix\n' +
    'fe00::1\tip6-allnodes\n' +
    'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) {
    text += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  }
  const aliases = pod.spec?.hostAliases ?? [];
  if (aliases.length) {
    text += '\n# Entries added by HostAliases.\n';
    for (const a of aliases) text += `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`;
  }
  return text;
}
