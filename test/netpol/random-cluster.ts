// A seeded random cluster and a random sequence of the changes a policy controller sees (pods
// relabelled, started, stopped, moved to a new IP; policies added, edited, deleted; namespaces
// relabelled), as immutable object snapshots: unchanged objects keep their identity from one
// snapshot to the next, as an informer cache's do.

import type { Namespace, Pod } from '../../src/api/types.js';
import type { NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort } from '../../src/netpol/types.js';
import { seededRng } from '../../src/scheduler/rng.js';

export interface Snapshot {
  readonly pods: readonly Pod[];
  readonly namespaces: readonly Namespace[];
  readonly policies: readonly NetworkPolicy[];
  /** What changed to get here. */
  readonly change: string;
}

export const NODES = ['n1', 'n2', 'n3'];
export const NODE_IPS = new Map(NODES.map((n, i) => [n, [`172.18.0.${i + 2}`]]));
const NSS = ['x', 'y', 'z', 'w'];
const APPS = ['a', 'b', 'c', 'd'];

export function randomSnapshots(seed: number, steps: number): Snapshot[] {
  const rand = seededRng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  let nextIP = 10;
  const mkPod = (i: number, ns = pick(NSS), app = pick(APPS)): Pod => {
    const node = pick(NODES);
    const ip = `10.244.${NODES.indexOf(node) + 1}.${nextIP++ % 250 + 2}`;
    return { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, namespace: ns, labels: { app } },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'x', ports: [
        { name: 'http', containerPort: pick([80, 8080]), protocol: 'TCP' },
        { name: 'dns', containerPort: 53, protocol: 'UDP' }] }] },
      status: { podIP: ip, podIPs: [{ ip }] } } as unknown as Pod;
  };
  const peer = (): NetworkPolicyPeer => pick<NetworkPolicyPeer>([
    { podSelector: { matchLabels: { app: pick(APPS) } } },
    { namespaceSelector: { matchLabels: { team: pick(['t1', 't2']) } } },
    { namespaceSelector: { matchLabels: { team: pick(['t1', 't2']) } }, podSelector: { matchLabels: { app: pick(APPS) } } },
    { ipBlock: { cidr: '10.244.0.0/16', except: [`10.244.${Math.floor(rand() * 3) + 1}.0/24`] } },
    { namespaceSelector: {} },
  ]);
  const port = (): NetworkPolicyPort => pick<NetworkPolicyPort>([{ port: 80 }, { port: 'http' },
    { port: 8000, endPort: 9000 }, { protocol: 'UDP', port: 'dns' }, { protocol: 'UDP' }]);
  let nPol = 0;
  const mkPolicy = (ns = pick(NSS), name = `np${nPol++}`): NetworkPolicy => {
    const ing = rand() < 0.8;
    const eg = !ing || rand() < 0.4;
    const sel = rand() < 0.2 ? {} : { matchLabels: { app: pick(APPS) } };
    return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: ns },
      spec: { podSelector: sel,
        ...(ing ? { ingress: rand() < 0.15 ? [] : [{ from: [peer(), peer()], ports: rand() < 0.3 ? [] : [port()] }] } : {}),
        ...(eg ? { egress: rand() < 0.15 ? [] : [{ to: rand() < 0.2 ? [] : [peer()], ports: [port()] }] } : {}),
        policyTypes: [...(ing ? ['Ingress' as const] : []), ...(eg ? ['Egress' as const] : [])] } } as NetworkPolicy;
  };
  const mkNs = (name: string, team = pick(['t1', 't2', 't3'])): Namespace =>
    ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { team } } }) as Namespace;

  let pods: Pod[] = Array.from({ length: 30 }, (_, i) => mkPod(i));
  let namespaces: Namespace[] = NSS.map((n) => mkNs(n));
  let policies: NetworkPolicy[] = Array.from({ length: 12 }, () => mkPolicy());
  let nextPod = pods.length;
  const out: Snapshot[] = [{ pods, namespaces, policies, change: 'start' }];
  for (let s = 0; s < steps; s++) {
    const r = rand();
    let change: string;
    if (r < 0.25) {
      const i = Math.floor(rand() * pods.length);
      const p = pods[i]!;
      const app = pick(APPS);
      change = `relabel pod ${p.metadata.namespace}/${p.metadata.name} app=${app}`;
      pods = pods.map((q, k) => (k === i ? { ...q, metadata: { ...q.metadata, labels: { app } } } : q));
    } else if (r < 0.35) {
      const p = mkPod(nextPod++);
      change = `start pod ${p.metadata.namespace}/${p.metadata.name} on ${p.spec!.nodeName}`;
      pods = [...pods, p];
    } else if (r < 0.45 && pods.length > 5) {
      const i = Math.floor(rand() * pods.length);
      change = `stop pod ${pods[i]!.metadata.namespace}/${pods[i]!.metadata.name}`;
      pods = pods.filter((_, k) => k !== i);
    } else if (r < 0.5) {
      const i = Math.floor(rand() * pods.length);
      const p = pods[i]!;
      const again = mkPod(Number(p.metadata.name!.slice(1)), p.metadata.namespace, p.metadata.labels!.app);
      change = `re-create pod ${p.metadata.namespace}/${p.metadata.name} at ${again.status!.podIP}`;
      pods = pods.map((q, k) => (k === i ? again : q));
    } else if (r < 0.65) {
      const p = mkPolicy();
      change = `add policy ${p.metadata.namespace}/${p.metadata.name}`;
      policies = [...policies, p];
    } else if (r < 0.8 && policies.length > 0) {
      const i = Math.floor(rand() * policies.length);
      const old = policies[i]!;
      const p = mkPolicy(old.metadata.namespace, old.metadata.name);
      change = `edit policy ${old.metadata.namespace}/${old.metadata.name}`;
      policies = policies.map((q, k) => (k === i ? p : q));
    } else if (r < 0.9 && policies.length > 0) {
      const i = Math.floor(rand() * policies.length);
      change = `delete policy ${policies[i]!.metadata.namespace}/${policies[i]!.metadata.name}`;
      policies = policies.filter((_, k) => k !== i);
    } else {
      const i = Math.floor(rand() * namespaces.length);
      const n = mkNs(namespaces[i]!.metadata.name!);
      change = `relabel namespace ${n.metadata.name} team=${n.metadata.labels!.team}`;
      namespaces = namespaces.map((q, k) => (k === i ? n : q));
    }
    out.push({ pods, namespaces, policies, change });
  }
  return out;
}
