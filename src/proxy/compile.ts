// Offline compile (`kdp rules compile`): Kubernetes objects + a KubeProxyConfiguration + node
// facts → the full-sync text a fresh kube-proxy of the mode would hand to the kernel.
//
// ServiceCIDRs: kube-proxy learns them from networking.k8s.io/v1 ServiceCIDR objects. A real
// cluster always has one (the API server creates the default `kubernetes` ServiceCIDR from its
// --service-cluster-ip-range), so when the inputs hold none, kdp assumes that default object
// with kdp's ranges: 10.96.0.0/12 and fd00:10:96::/112.
//
// Dual stack: one proxier per family of the node's IPs (IPv4 when none are given). With both
// families the output is the IPv4 text then the IPv6 text, each preceded by a `# IPv4` /
// `# IPv6` line (comments every restore/nft reader skips).

import { parseCIDR } from '../api/net.js';
import type { EndpointSlice, KubeObject, Node, Service, ServiceCIDR } from '../api/types.js';
import { kdpError } from '../errors.js';
import type { Artifact, Proxier, ProxierConfig, ProxyMode, SyncResult } from './backend.js';
import { buildProxierConfigs, parseKubeProxyConfiguration } from './config.js';
import type { NodeFacts } from './config.js';
import type { ProblemReporter } from './input-check.js';
import { ProxyPipeline } from './pipeline.js';
import { proxyMode, type BackendModule } from './registry.js';

export const DEFAULT_SERVICE_CIDRS = ['10.96.0.0/12', 'fd00:10:96::/112'];

export type { BackendModule };

export type BackendLoader = (mode: ProxyMode) => Promise<BackendModule>;

/** Loads the mode's compiler (its registry entry's `loadBackend`); an unknown mode is a clear
 *  KDP_CONFIG. */
export const loadBackend: BackendLoader = async (mode) => {
  const mod: Partial<BackendModule> = await proxyMode(mode).loadBackend();
  if (typeof mod.buildProxier !== 'function') {
    throw kdpError('KDP_CONFIG', `proxy mode ${mode}: backend does not export buildProxier`);
  }
  return mod as BackendModule;
};

export interface CompileOptions {
  /** Services, EndpointSlices, ServiceCIDRs, Nodes (others are ignored). */
  readonly objects: readonly KubeObject[];
  /** KubeProxyConfiguration YAML; undefined = all defaults. */
  readonly configText?: string;
  /** Overrides the config's mode. */
  readonly mode?: ProxyMode;
  readonly nodeName: string;
  readonly nodeIPs: readonly string[];
  /** Sort as upstream's tests do (golden files are canonical). */
  readonly canonical?: boolean;
  /** Node labels / pod CIDRs; default: from the Node object named nodeName, if any. */
  readonly nodeLabels?: Readonly<Record<string, string>>;
  readonly podCIDRs?: readonly string[];
  /** Host capabilities (iptables `--random-fully`, nfacct); default off. */
  readonly capabilities?: NodeFacts['capabilities'];
  /** Hears of every object, port, endpoint or address left out as invalid (per family). */
  readonly onProblem?: ProblemReporter;
}

const kindOf = (o: KubeObject) => o.kind ?? '';

/** ServiceCIDRs from ServiceCIDR objects, or the default (see the header). */
export function serviceCIDRsOf(objects: readonly KubeObject[]): string[] {
  const out: string[] = [];
  for (const o of objects) {
    if (kindOf(o) !== 'ServiceCIDR') continue;
    for (const c of (o as ServiceCIDR).spec?.cidrs ?? []) if (parseCIDR(c)) out.push(c);
  }
  return out.length ? out : [...DEFAULT_SERVICE_CIDRS];
}

/** The proxier configs this compile runs (one per family). */
export function compileConfigs(opts: CompileOptions): ProxierConfig[] {
  const settings = parseKubeProxyConfiguration(opts.configText);
  const node = opts.objects.find((o) => kindOf(o) === 'Node' &&
    o.metadata?.name === opts.nodeName) as Node | undefined;
  return buildProxierConfigs(settings, {
    nodeName: opts.nodeName,
    nodeIPs: opts.nodeIPs,
    podCIDRs: opts.podCIDRs ?? node?.spec?.podCIDRs ?? [],
    labels: opts.nodeLabels ?? node?.metadata?.labels ?? {},
    ...(opts.capabilities ? { capabilities: opts.capabilities } : {}),
    ...(opts.mode ? { mode: opts.mode } : {}),
  }, serviceCIDRsOf(opts.objects));
}

/** Feeds every Service and EndpointSlice of `objects` into a pipeline (an initial list). */
export function feedObjects(p: ProxyPipeline, objects: readonly KubeObject[]): void {
  for (const o of objects) {
    if (kindOf(o) === 'Service') p.onService(undefined, o as Service);
    else if (kindOf(o) === 'EndpointSlice') p.onEndpointSlice(o as EndpointSlice);
  }
}

/** Runs a first (full) sync of every family with a given backend module. */
export function compileWith(backend: BackendModule, opts: CompileOptions): string {
  const configs = compileConfigs(opts);
  const texts = configs.map((config) => {
    const pipeline = new ProxyPipeline(backend.buildProxier(config), opts.onProblem);
    feedObjects(pipeline, opts.objects);
    const result: SyncResult = pipeline.sync();
    const text = result.artifacts.map((a) =>
      opts.canonical && backend.canonicalize ? backend.canonicalize(a) : a.text).join('');
    return configs.length > 1 ? `# ${config.family}\n${text}` : text;
  });
  return texts.join('');
}

/**
 * `kdp rules compile`: the full-sync text of `mode` (or the config's mode) for these objects.
 * Async only because backends are loaded on demand.
 */
export async function compileOffline(opts: CompileOptions,
  loader: BackendLoader = loadBackend): Promise<string> {
  const mode = opts.mode ?? parseKubeProxyConfiguration(opts.configText).mode;
  const backend = await loader(mode);
  return compileWith(backend, { ...opts, mode });
}
