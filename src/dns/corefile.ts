// The part of CoreDNS's Corefile kdp's DNS server follows, so the `coredns` ConfigMap kubeadm
// writes configures it: one server block (`.:53`) with `kubernetes ZONES { pods MODE; ttl N;
// fallthrough ZONES }`, `forward . /etc/resolv.conf|IP[:PORT]... { max_concurrent N }`,
// `prometheus [ADDR]`, `health [ADDR]`, `ready [ADDR]`. CoreDNS's other plugins that kubeadm
// lists (errors, cache, loop, reload, loadbalance, log) are accepted and reported as not
// applied; anything else is an error naming the line, as CoreDNS refuses unknown directives.

import { kdpError } from '../errors.js';
import { normalizeName } from './names.js';
import type { PodMode } from './lookup.js';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export interface DnsServeConfig {
  readonly port: number;
  readonly zone: string;
  readonly reverseZones: boolean;
  readonly ttl: number;
  readonly pods: PodMode;
  /** `/etc/resolv.conf`-style file to read upstreams from, or the upstreams themselves. */
  readonly forward?: { readonly resolvConf?: string; readonly upstreams: readonly HostPort[];
    readonly maxConcurrent: number };
  readonly health?: HostPort;
  readonly ready?: HostPort;
  readonly metrics?: HostPort;
  /** Plugins in the file kdp does not apply (logged at start). */
  readonly ignored: readonly string[];
}

/** CoreDNS's defaults for a kubeadm cluster without a Corefile (`kdp dns serve` flags). */
export const DEFAULT_SERVE_CONFIG: DnsServeConfig = {
  port: 53, zone: 'cluster.local', reverseZones: true, ttl: 5, pods: 'insecure',
  forward: { resolvConf: '/etc/resolv.conf', upstreams: [], maxConcurrent: 1000 },
  health: { host: '', port: 8080 }, ready: { host: '', port: 8181 },
  metrics: { host: '', port: 9153 }, ignored: [],
};

const IGNORED = new Set(['errors', 'cache', 'loop', 'reload', 'loadbalance', 'log', 'debug',
  'whoami', 'any']);

interface Directive {
  readonly name: string;
  readonly args: string[];
  readonly block: Directive[];
  readonly line: number;
}

function tokenize(text: string): Array<{ t: string; line: number }> {
  const out: Array<{ t: string; line: number }> = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '');
    for (const m of line.matchAll(/[{}]|[^\s{}]+/g)) out.push({ t: m[0], line: i + 1 });
    out.push({ t: '\n', line: i + 1 });
  });
  return out;
}

function parseBlock(toks: Array<{ t: string; line: number }>, i: number, what: string):
  { list: Directive[]; next: number } {
  const list: Directive[] = [];
  while (i < toks.length) {
    const tok = toks[i]!;
    if (tok.t === '\n') { i++; continue; }
    if (tok.t === '}') return { list, next: i + 1 };
    if (tok.t === '{') throw bad(tok.line, 'unexpected {');
    const args: string[] = [];
    let j = i + 1;
    while (j < toks.length && !['\n', '{', '}'].includes(toks[j]!.t)) args.push(toks[j++]!.t);
    let block: Directive[] = [];
    if (toks[j]?.t === '{') {
      const inner = parseBlock(toks, j + 1, tok.t);
      block = inner.list;
      j = inner.next;
    }
    list.push({ name: tok.t, args, block, line: tok.line });
    i = j;
  }
  if (what !== '') throw bad(toks[toks.length - 1]?.line ?? 1, `unclosed block of ${what}`);
  return { list, next: i };
}

const bad = (line: number, msg: string) => kdpError('KDP_CONFIG', `Corefile:${line}: ${msg}`);

function hostPort(text: string | undefined, def: HostPort, line: number): HostPort {
  if (!text) return def;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text) ?? /^()([^:]+)$/.exec(text);
  if (!m) throw bad(line, `"${text}" is not [HOST]:PORT`);
  const port = m[3] ? Number(m[3]) : def.port;
  if (!(port >= 0 && port <= 65535)) throw bad(line, `port ${m[3]} out of range`);
  return { host: m[1] || m[2] || '', port };
}

/** Reads the first server block of a Corefile. Throws KDP_CONFIG naming the line. */
export function parseCorefile(text: string): DnsServeConfig {
  const blocks = parseBlock(tokenize(text), 0, '').list;
  const server = blocks[0];
  if (!server || !server.block.length) throw bad(1, 'no server block (e.g. `.:53 { … }`)');
  const key = server.name;
  const port = key.includes(':') ? Number(key.slice(key.lastIndexOf(':') + 1)) : 53;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw bad(server.line, `bad port in ${key}`);
  let cfg: { -readonly [K in keyof DnsServeConfig]: DnsServeConfig[K] } = {
    ...DEFAULT_SERVE_CONFIG, port, forward: undefined, health: undefined, ready: undefined,
    metrics: undefined, ignored: [],
  };
  let sawKubernetes = false;
  for (const d of server.block) {
    switch (d.name) {
      case 'kubernetes':
        cfg = { ...cfg, ...kubernetes(d) };
        sawKubernetes = true;
        break;
      case 'forward':
        cfg.forward = forward(d);
        break;
      case 'prometheus':
        cfg.metrics = hostPort(d.args[0], { host: '', port: 9153 }, d.line);
        break;
      case 'health':
        cfg.health = hostPort(d.args[0], { host: '', port: 8080 }, d.line);
        break;
      case 'ready':
        cfg.ready = hostPort(d.args[0], { host: '', port: 8181 }, d.line);
        break;
      default:
        if (!IGNORED.has(d.name)) throw bad(d.line, `unknown directive '${d.name}'`);
        cfg.ignored = [...cfg.ignored, d.name];
    }
  }
  if (!sawKubernetes) throw bad(server.line, 'no kubernetes plugin: nothing to serve');
  return cfg;
}

function kubernetes(d: Directive): Partial<DnsServeConfig> {
  const zones = d.args.map(normalizeName);
  const zone = zones.find((z) => !z.endsWith('in-addr.arpa') && !z.endsWith('ip6.arpa'));
  if (!zone) throw bad(d.line, 'kubernetes: no cluster zone (e.g. cluster.local)');
  const out: { -readonly [K in keyof DnsServeConfig]?: DnsServeConfig[K] } = {
    zone, reverseZones: zones.includes('in-addr.arpa') || zones.includes('ip6.arpa'),
    ttl: 5, pods: 'disabled',
  };
  for (const s of d.block) {
    if (s.name === 'pods') {
      if (!['disabled', 'insecure', 'verified'].includes(s.args[0] ?? '')) {
        throw bad(s.line, `pods: "${s.args[0] ?? ''}" is not disabled, insecure or verified`);
      }
      out.pods = s.args[0] as PodMode;
    } else if (s.name === 'ttl') {
      const ttl = Number(s.args[0]);
      if (!Number.isInteger(ttl) || ttl < 0 || ttl > 3600) throw bad(s.line, 'ttl: must be 0..3600');
      out.ttl = ttl;
    } else if (!['fallthrough', 'endpoint_pod_names', 'noendpoints', 'namespaces', 'labels',
      'kubeconfig', 'endpoint', 'tls', 'ignore'].includes(s.name)) {
      throw bad(s.line, `kubernetes: unknown property '${s.name}'`);
    }
  }
  return out;
}

function forward(d: Directive): NonNullable<DnsServeConfig['forward']> {
  if (d.args[0] !== '.') throw bad(d.line, 'forward: only `forward . TO...` (every name) is supported');
  const to = d.args.slice(1);
  if (!to.length) throw bad(d.line, 'forward: no destination');
  let resolvConf: string | undefined;
  const upstreams: HostPort[] = [];
  for (const t of to) {
    if (t.startsWith('/')) resolvConf = t;
    else upstreams.push(hostPort(t.replace(/^dns:\/\//, ''), { host: '', port: 53 }, d.line));
  }
  let maxConcurrent = 0;
  for (const s of d.block) {
    if (s.name === 'max_concurrent') {
      maxConcurrent = Number(s.args[0]);
      if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw bad(s.line, 'max_concurrent: a positive integer');
    }
  }
  return { ...(resolvConf ? { resolvConf } : {}), upstreams, maxConcurrent: maxConcurrent || 1000 };
}
