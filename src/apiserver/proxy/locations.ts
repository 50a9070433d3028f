// Where the `pods/proxy` and `services/proxy` subresources send a request, as upstream's
// ResourceLocation functions decide (pkg/registry/core/pod/strategy.go, service/storage):
// the id is `name`, `name:port` or `scheme:name:port`; a pod without a port takes its first
// declared container port; a Service port is a port name, or a number mapped to its name, and
// the request goes to one ready endpoint of that port, chosen at random.

import type { EndpointSlice, Pod, Service } from '../../api/types.js';
import { kdpError } from '../../errors.js';

export interface ProxyLocation {
  readonly scheme: 'http' | 'https';
  readonly ip: string;
  /** undefined: the scheme's default port. */
  readonly port?: number;
  /** The node whose namespace holds `ip` (pods and endpoints), when known. */
  readonly node?: string;
}

/** upstream utilnet.SplitSchemeNamePort; undefined when the id is not valid. */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  if (!name || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  return { scheme, name, port };
}

function badRequest(msg: string) {
  return kdpError('KDP_BAD_REQUEST', msg);
}

function unavailable(msg: string) {
  return kdpError('KDP_UNAVAILABLE', msg);
}

/** upstream proxyutil.IsProxyableIP: never loopback, link-local or unspecified addresses. */
export function proxyableIP(ip: string): void {
  const v4 = /^(\d+)\.(\d+)\./.exec(ip);
  const bad = v4 ? ip.startsWith('127.') || (v4[1] === '169' && v4[2] === '254') || ip === '0.0.0.0'
    : ip === '::1' || ip === '::' || /^fe[89ab]/i.test(ip);
  if (bad) throw badRequest(`address not allowed`);
}

function portNumber(port: string, what: string): number | undefined {
  if (port === '') return undefined;
  const n = Number(port);
  if (!/^\d+$/.test(port) || n < 1 || n > 65535) throw badRequest(`invalid ${what} port ${JSON.stringify(port)}`);
  return n;
}

export function podLocation(pod: Pod, scheme: string, port: string): ProxyLocation {
  let p = port;
  if (p === '') {
    const first = (pod.spec?.containers ?? []).find((c) => (c.ports ?? []).length > 0);
    if (first) p = String(first.ports![0]!.containerPort);
  }
  const ip = pod.status?.podIP;
  if (!ip) throw badRequest(`address not allowed`);
  proxyableIP(ip);
  return { scheme: scheme === 'https' ? 'https' : 'http', ip, port: portNumber(p, 'pod'),
    node: pod.spec?.nodeName };
}

export function serviceLocation(
  svc: Service, slices: readonly EndpointSlice[], id: string, scheme: string, port: string,
  random: () => number = Math.random,
): ProxyLocation {
  let portName = port;
  if (/^\d+$/.test(port)) {
    const sp = (svc.spec?.ports ?? []).find((x) => String(x.port) === port);
    if (!sp) throw unavailable(`no service port ${port} found for service "${svc.metadata.name}"`);
    portName = sp.name ?? '';
  }
  const candidates: ProxyLocation[] = [];
  for (const s of slices) {
    if (s.addressType === 'FQDN') continue;
    const sp = (s.ports ?? []).find((x) => (x.name ?? '') === portName);
    if (!sp?.port) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const ip of e.addresses.slice(0, 1)) {
        candidates.push({ scheme: scheme === 'https' ? 'https' : 'http', ip, port: sp.port, node: e.nodeName });
      }
    }
  }
  if (candidates.length === 0) throw unavailable(`no endpoints available for service "${id}"`);
  const pick = candidates[Math.floor(random() * candidates.length)]!;
  proxyableIP(pick.ip);
  return pick;
}
