// The DNS server program (what a `kdp/dns` pod runs, and `kdp dns serve`): the record index
// watched through an API client, the UDP/TCP listener, the forwarder to the resolv.conf's
// nameservers, metrics, health and readiness. Like CoreDNS it waits up to `startupTimeoutMs`
// for the first list before it serves, and serves anyway (SERVFAIL for unknown names) after.

import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { canonicalIP } from '../api/net.js';
import type { Client } from '../client/types.js';
import type { DnsServeConfig, HostPort } from './corefile.js';
import { buildForwarder, hostPort, parseResolvConf, type Upstream } from './forward.js';
import { buildDnsHandler } from './handler.js';
import { startDnsHttp, type DnsHttp } from './http.js';
import { buildDnsMetrics } from './metrics.js';
import type { DnsIndex } from './records.js';
import { listenDns, type DnsListener } from './server.js';
import { buildLiveSource, type LiveSource } from './source.js';

export interface StartDnsOptions {
  readonly client: Client;
  readonly config: DnsServeConfig;
  /** Address of every listener whose config has none (''): default all addresses. */
  readonly host?: string;
  readonly log: (line: string) => void;
  readonly startupTimeoutMs?: number;
  readonly readFile?: (path: string) => string;
}

export interface RunningDns {
  readonly dns: DnsListener;
  readonly http: DnsHttp;
  readonly source: LiveSource;
  readonly upstreams: readonly Upstream[];
  close(): Promise<void>;
}

const isLoopback = (ip: string) => ip.startsWith('127.') || ip === '::1';

/**
 * The upstreams of a forward config. Loopback nameservers are dropped when this server listens
 * on the same port of every address (in a pod: the pod's own loopback, so a query would come
 * back here — CoreDNS's `loop` plugin stops the server for this; kdp leaves them out and says so).
 */
export function resolveUpstreams(cfg: DnsServeConfig, listenHost: string,
  read: (path: string) => string, log: (l: string) => void): Upstream[] {
  const f = cfg.forward;
  if (!f) return [];
  const out: Upstream[] = f.upstreams.map((u) => ({ host: canonicalIP(u.host) ?? u.host, port: u.port }));
  if (f.resolvConf) {
    let text = '';
    try {
      text = read(f.resolvConf);
    } catch (e) {
      log(`[WARNING] forward: cannot read ${f.resolvConf}: ${(e as Error).message}`);
    }
    for (const ip of parseResolvConf(text)) out.push({ host: ip, port: 53 });
  }
  const wildcard = listenHost === '' || listenHost === '::' || listenHost === '0.0.0.0';
  return out.filter((u) => {
    const loop = isLoopback(u.host) && u.port === cfg.port && (wildcard || isLoopback(listenHost));
    if (loop) {
      log(`[WARNING] forward: leaving out ${hostPort(u)}: it is this server's own address ` +
        '(a forwarding loop)');
    }
    return !loop;
  });
}

/** `ns.dns.<zone>`: the ClusterIPs of the Services this server's addresses serve, else those. */
function nsAddresses(local: readonly string[]): (index: DnsIndex) => readonly string[] {
  return (index) => {
    const out: string[] = [];
    for (const [key, eps] of index.endpoints) {
      if (!eps.some((ep) => local.includes(ep.ip))) continue;
      for (const ip of index.services.get(key)?.clusterIPs ?? []) if (!out.includes(ip)) out.push(ip);
    }
    return out.length ? out : local;
  };
}

function localIPs(): string[] {
  return Object.values(networkInterfaces()).flat()
    .filter((i) => i && !i.internal && !(i.family === 'IPv6' && i.scopeid))
    .map((i) => canonicalIP(i!.address)).filter((ip): ip is string => !!ip);
}

export async function startDns(o: StartDnsOptions): Promise<RunningDns> {
  const cfg = o.config;
  const host = o.host ?? '';
  // '' (all addresses) is Node's default: `::` where IPv6 exists, else 0.0.0.0.
  const on = (hp: HostPort | undefined) => hp && { host: hp.host || host, port: hp.port };
  if (cfg.ignored.length) {
    o.log(`[INFO] plugins not applied by kdp's DNS server: ${[...new Set(cfg.ignored)].join(', ')}`);
  }
  const source = buildLiveSource(o.client, { zone: cfg.zone, pods: cfg.pods,
    onError: (e) => o.log(`[ERROR] plugin/kubernetes: ${(e as Error).message}`) });
  source.start();
  const upstreams = resolveUpstreams(cfg, host, o.readFile ?? ((p) => readFileSync(p, 'utf8')), o.log);
  if (cfg.forward && !upstreams.length) {
    o.log('[WARNING] forward: no upstream resolvers: names outside the cluster will be REFUSED');
  }
  const forwarder = cfg.forward ? buildForwarder({ upstreams,
    maxConcurrent: cfg.forward.maxConcurrent }) : undefined;
  const metrics = buildDnsMetrics(`dns://:${cfg.port}`);
  const handler = buildDnsHandler({
    answer: { zone: cfg.zone, ttl: cfg.ttl, pods: cfg.pods, reverseZones: cfg.reverseZones,
      nsAddresses: nsAddresses(localIPs()) },
    source, forwarder, metrics, log: o.log,
  });
  const closers: Array<() => unknown> = [() => source.stop(), () => forwarder?.close(),
    () => handler.close()];
  const closeAll = async () => { for (const c of closers.reverse()) await c(); };
  try {
    const http = await startDnsHttp({ health: on(cfg.health), isReady: () => source.hasSynced(),
      ready: on(cfg.ready), metrics: on(cfg.metrics), registry: metrics.registry });
    closers.push(() => http.close());
    if (!(await source.waitForSync(o.startupTimeoutMs ?? 5000))) {
      o.log('[WARNING] plugin/kubernetes: starting server with unsynced Kubernetes API');
    }
    const dns = await listenDnsAnyFamily(handler, host, cfg.port);
    closers.push(() => dns.close());
    o.log(`.:${dns.port} on ${dns.host} (cluster zone ${cfg.zone}, ttl ${cfg.ttl}, pods ${cfg.pods}` +
      `${upstreams.length ? `, forward to ${upstreams.map(hostPort).join(' ')}` : ''})`);
    return { dns, http, source, upstreams, close: closeAll };
  } catch (e) {
    await closeAll();
    throw e;
  }
}

/** '' binds `::` (both families), or 0.0.0.0 where the namespace has no IPv6. */
async function listenDnsAnyFamily(handler: ReturnType<typeof buildDnsHandler>, host: string,
  port: number): Promise<DnsListener> {
  if (host !== '') return listenDns(handler, { host, port });
  try {
    return await listenDns(handler, { host: '::', port });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL') throw e;
    return listenDns(handler, { host: '0.0.0.0', port });
  }
}
