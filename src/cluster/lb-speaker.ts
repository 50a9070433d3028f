// netns mode's LoadBalancer announcement, as MetalLB's layer-2 speaker: exactly one node owns each
// LoadBalancer address and answers ARP (IPv4) / NDP (IPv6) for it on the underlay; kube-proxy's
// rules on that node (KUBE-SERVICES / the ext chains match the address as destination) then
// DNAT the traffic to the endpoints. Ownership is the address as a host route (/32, /128) on the
// owner's uplink (`eth0`), so the owner's kernel answers ARP for it, as kube-vip's ARP mode does.
// Election as MetalLB's: candidates are the Ready nodes not labelled
// `node.kubernetes.io/exclude-from-external-load-balancers` (for `externalTrafficPolicy: Local`,
// only those with a ready endpoint of the Service), sorted by sha256(node + "#" + address)
// ascending; the first wins. Only addresses of `ipMode: VIP` ingress inside the pool are
// announced. A new owner does not send gratuitous ARP: a client whose ARP cache names the old
// owner reaches it until the entry ages out.

import { createHash } from 'node:crypto';
import type { Node } from '../api/types.js';
import type { Service } from '../api/types/service.js';
import type { InformerFactory } from '../client/informer.js';
import type { KubeObject } from '../client/types.js';
import type { HostExec } from '../host/exec.js';
import type { Topology } from '../host/topology.js';

/** The kernel side: a host route of `ip` on the node's uplink, or not. */
export interface LbAddresses {
  add(node: string, ip: string): Promise<void>;
  remove(node: string, ip: string): Promise<void>;
}

export const EXCLUDE_LB_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';

export function netnsLbAddresses(exec: HostExec, topo: Topology): LbAddresses {
  const dev = topo.spec.node.uplink;
  const cidr = (ip: string) => `${ip}/${ip.includes(':') ? 128 : 32}`;
  return {
    async add(node, ip) {
      await exec.run('ip', ['addr', 'replace', cidr(ip), 'dev', dev], { netns: topo.nodeNetns(node) });
    },
    async remove(node, ip) {
      // Gone already (node restarted, namespace removed): nothing to undo.
      await exec.run('ip', ['addr', 'del', cidr(ip), 'dev', dev], { netns: topo.nodeNetns(node) })
        .catch(() => undefined);
    },
  };
}

/** In memory, for tests: node → addresses. */
export function fakeLbAddresses(): LbAddresses & { readonly held: Map<string, Set<string>> } {
  const held = new Map<string, Set<string>>();
  return {
    held,
    async add(node, ip) { let s = held.get(node); if (!s) held.set(node, s = new Set()); s.add(ip); },
    async remove(node, ip) { held.get(node)?.delete(ip); },
  };
}

/** MetalLB's layer-2 owner: lowest sha256(node#ip); undefined without candidates. */
export function electOwner(ip: string, candidates: readonly string[]): string | undefined {
  const h = (n: string) => createHash('sha256').update(`${n}#${ip}`).digest('hex');
  return [...candidates].sort((a, b) => (h(a) < h(b) ? -1 : h(a) > h(b) ? 1 : 0))[0];
}

export interface EndpointSlice extends KubeObject {
  endpoints?: Array<{ addresses: string[]; nodeName?: string; conditions?: { ready?: boolean } }>;
}

/** address → owner node of every `ipMode: VIP` LoadBalancer ingress address `inPool` accepts
 *  (also what `kdp trace` uses as the node an outside client enters at). */
export function electLbOwners(services: readonly Service[], nodes: readonly Node[],
  slices: readonly EndpointSlice[], inPool: (ip: string) => boolean): Map<string, string> {
  const ready = nodes.filter((n) =>
    (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') &&
    n.metadata.labels?.[EXCLUDE_LB_LABEL] === undefined).map((n) => n.metadata.name!);
  const out = new Map<string, string>();
  for (const s of services) {
    if (s.spec?.type !== 'LoadBalancer' || s.metadata.deletionTimestamp) continue;
    let candidates = ready;
    if (s.spec.externalTrafficPolicy === 'Local') {
      const withEndpoint = new Set<string>();
      for (const sl of slices) {
        if (sl.metadata.namespace !== s.metadata.namespace ||
          sl.metadata.labels?.['kubernetes.io/service-name'] !== s.metadata.name) continue;
        for (const ep of sl.endpoints ?? []) {
          if (ep.nodeName && ep.conditions?.ready !== false) withEndpoint.add(ep.nodeName);
        }
      }
      candidates = ready.filter((n) => withEndpoint.has(n));
    }
    for (const ing of s.status?.loadBalancer?.ingress ?? []) {
      if (!ing.ip || ing.ipMode === 'Proxy' || !inPool(ing.ip)) continue;
      const owner = electOwner(ing.ip, candidates);
      if (owner) out.set(ing.ip, owner);
    }
  }
  return out;
}

const SERVICES = { group: '', version: 'v1', resource: 'services' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' } as const;

export interface LbSpeaker {
  /** Resolves when the kernel matches the objects as last seen (tests). */
  settled(): Promise<void>;
  /** Withdraws every address it announced. */
  stop(): Promise<void>;
}

export function startLbSpeaker(o: {
  informers: InformerFactory;
  addresses: LbAddresses;
  /** Announce only these (the lab cloud's pool). */
  inPool: (ip: string) => boolean;
  onError?: (e: unknown) => void;
}): LbSpeaker {
  const svcInf = o.informers.informerFor<Service>(SERVICES);
  const nodeInf = o.informers.informerFor<Node>(NODES);
  const sliceInf = o.informers.informerFor<EndpointSlice>(SLICES);
  const applied = new Map<string, string>(); // ip → owner node
  let chain: Promise<void> = Promise.resolve();
  let queued = false;
  let stopped = false;

  const desired = () => electLbOwners(svcInf.cache.list(), nodeInf.cache.list(), sliceInf.cache.list(), o.inPool);

  async function reconcile(): Promise<void> {
    queued = false;
    if (stopped) return;
    const want = desired();
    for (const [ip, node] of [...applied]) {
      if (want.get(ip) === node) continue;
      await o.addresses.remove(node, ip);
      applied.delete(ip);
    }
    for (const [ip, node] of want) {
      if (applied.get(ip) === node) continue;
      await o.addresses.add(node, ip);
      applied.set(ip, node);
    }
  }

  function schedule(): void {
    if (queued || stopped) return;
    queued = true;
    chain = chain.then(reconcile).catch((e) => { o.onError?.(e); });
  }
  const handler = { onAdd: schedule, onUpdate: schedule, onDelete: schedule };
  svcInf.addEventHandler(handler);
  nodeInf.addEventHandler(handler);
  sliceInf.addEventHandler(handler);
  schedule();

  return {
    async settled() { schedule(); await chain; },
    async stop() {
      stopped = true;
      await chain;
      for (const [ip, node] of applied) await o.addresses.remove(node, ip).catch(() => undefined);
      applied.clear();
    },
  };
}
