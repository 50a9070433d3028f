// A node agent's compiler of its `inet kdp-netpol` table: the same text as
// compileNetpolNftables (nftables.ts), but keeping between calls what it computed, so a change
// recomputes only what it can affect. Models are compared by object identity: buildModel reuses
// a PodInfo / defaulted policy for an informer object that did not change, so the pods and
// policies not in both models are exactly the changed ones.
//
// What a change recomputes:
// - a peer set: its member pods are kept; a changed pod (its old version in the previous model,
//   its new one in this model) leaves or joins them, matched against the set's selector peers
//   only; when its policy changed, or (for peers with a namespaceSelector) a namespace's labels
//   did, the members are found again among all pods. ipBlock peers hold no pod addresses.
//   Only a set whose members changed is rendered again.
// - which policies isolate a local pod: when the pod changed, or a changed policy (old or new)
//   selects it.
// - a pod's chain: when the pod or its isolating policies changed; chains with egress
//   named-port rules (their addresses are every matching pod's) on any pod or namespace change.
// - everything: when the node's IPs or the cluster's address families change.
// Contract: `compile(m)` === compileNetpolNftables(m, { node }) for every sequence of models
// (tested on random sequences); models must not be mutated after being passed in.

import type { NetpolModel, PodInfo } from './model.js';
import { podPeerMatches, selects } from './evaluate.js';
import type { NetworkPolicy, PolicyType } from './types.js';
import { RangeSet } from './ip-ranges.js';
import {
  addPodIPs, chainName, familiesOf, isolatingSorted, localPods, podChain, renderTable,
  type Fam, type PodChain, type SetUse,
} from './nftables.js';

export interface NodeCompileStats {
  /** Everything was recomputed (first compile, node IPs or address families changed). */
  readonly full: boolean;
  readonly pods: number;
  readonly policies: number;
  readonly namespaces: number;
  /** Chains and sets recomputed. */
  readonly chains: number;
  readonly sets: number;
}

export interface NodeCompiler {
  compile(m: NetpolModel): string;
  /** What the last compile found changed and recomputed. */
  readonly last: NodeCompileStats;
}

interface ChainEntry { readonly pod: PodInfo; readonly pols: readonly NetworkPolicy[]; readonly chain: PodChain }
interface SetEntry { readonly use: SetUse; readonly members: Set<PodInfo>; elems: readonly string[] }
type Change<T> = { readonly old?: T; readonly now?: T };

const DIRS = ['Egress', 'Ingress'] as const;

/** Items only in `a` (old) or only in `b` (new), by identity. */
function changes<T>(a: readonly T[], b: readonly T[]): Array<Change<T>> {
  const inA = new Set(a);
  const inB = new Set(b);
  return [...a.filter((x) => !inB.has(x)).map((old) => ({ old })),
    ...b.filter((x) => !inA.has(x)).map((now) => ({ now }))];
}

const sameList = <T>(a: readonly T[], b: readonly T[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

export function buildNodeCompiler(node: string): NodeCompiler {
  let prev: NetpolModel | undefined;
  let shape = '';
  /** Isolating policies per local pod (by PodInfo) and direction. */
  let isolation = new Map<PodInfo, Record<PolicyType, NetworkPolicy[]>>();
  const chains = new Map<string, ChainEntry>();
  const sets = new Map<string, SetEntry>();
  let last: NodeCompileStats = { full: true, pods: 0, policies: 0, namespaces: 0, chains: 0, sets: 0 };

  return {
    get last() { return last; },
    compile(m) {
      const fams = familiesOf(m);
      const nodeIPs = m.nodeIPs.get(node) ?? [];
      const nowShape = `${fams.map((f) => f.sfx).join()}|${nodeIPs.join()}`;
      const full = !prev || nowShape !== shape;
      const pods = full ? [] : changes(prev!.pods, m.pods);
      const policies = full ? [] : changes(prev!.policies, m.policies);
      const namespaces = full ? [] : [...new Set([...prev!.namespaces.keys(), ...m.namespaces.keys()])]
        .filter((n) => JSON.stringify(prev!.namespaces.get(n)?.labels)
          !== JSON.stringify(m.namespaces.get(n)?.labels));
      if (full) { chains.clear(); sets.clear(); isolation = new Map(); }
      let setsMade = 0;

      // Peer sets: drop those whose policy or namespaces changed (found again below if still
      // used); move changed pods out of and into the others' members.
      const livePolicies = new Set(m.policies);
      for (const [name, s] of sets) {
        const { np, peers } = s.use;
        if (!livePolicies.has(np) || (namespaces.length > 0 && peers.some((p) => !p.ipBlock && p.namespaceSelector))) {
          sets.delete(name);
          continue;
        }
        const ns = np.metadata.namespace ?? 'default';
        let moved = false;
        for (const c of pods) {
          if (c.old && s.members.delete(c.old)) moved = true;
          if (c.now && peers.some((p) => !p.ipBlock && podPeerMatches(m, p, ns, c.now!))) {
            s.members.add(c.now);
            moved = true;
          }
        }
        if (moved) { s.elems = elementsOf(s.use, s.members); setsMade++; }
      }

      // Isolation of the node's pods.
      const local = localPods(m, node);
      const next = new Map<PodInfo, Record<PolicyType, NetworkPolicy[]>>();
      const policyNamespaces = new Set(policies.map((c) => (c.old ?? c.now)!.metadata.namespace ?? 'default'));
      for (const pod of local) {
        const had = isolation.get(pod);
        const stale = !had || (policyNamespaces.has(pod.namespace) && policies.some((c) =>
          (c.old && selects(c.old, pod)) || (c.now && selects(c.now, pod))));
        next.set(pod, stale
          ? { Egress: isolatingSorted(m, pod, 'Egress'), Ingress: isolatingSorted(m, pod, 'Ingress') }
          : had!);
      }
      isolation = next;

      // Chains, and the sets they use.
      const everyPodChanged = pods.length > 0 || namespaces.length > 0;
      const out: Array<{ pod: PodInfo; t: PolicyType; chain: PodChain }> = [];
      const used = new Map<string, { fam: Fam; elems: readonly string[] }>();
      const keep = new Set<string>();
      let chainsMade = 0;
      for (const t of DIRS) {
        for (const pod of local) {
          const pols = isolation.get(pod)![t];
          if (pols.length === 0) continue;
          const name = chainName(pod, t);
          let e = chains.get(name);
          if (!e || e.pod !== pod || !sameList(e.pols, pols) || (e.chain.everyPod && everyPodChanged)) {
            e = { pod, pols, chain: podChain(m, pod, t, pols, fams, nodeIPs.length > 0) };
            chains.set(name, e);
            chainsMade++;
          }
          keep.add(name);
          out.push({ pod, t, chain: e.chain });
          for (const u of e.chain.sets.values()) {
            if (used.has(u.name)) continue;
            let s = sets.get(u.name);
            if (!s || s.use.np !== u.np) {
              s = membersOf(m, u);
              sets.set(u.name, s);
              setsMade++;
            }
            used.set(u.name, { fam: u.fam, elems: s.elems });
          }
        }
      }
      for (const name of [...chains.keys()]) if (!keep.has(name)) chains.delete(name);
      for (const name of [...sets.keys()]) if (!used.has(name)) sets.delete(name);

      prev = m;
      shape = nowShape;
      last = { full, pods: pods.length, policies: policies.length, namespaces: namespaces.length,
        chains: chainsMade, sets: setsMade };
      return renderTable({ node, fams, nodeIPs, chains: out, sets: used });
    },
  };
}

/** A set's member pods found among all pods, and its elements. */
function membersOf(m: NetpolModel, use: SetUse): SetEntry {
  const ns = use.np.metadata.namespace ?? 'default';
  const selectors = use.peers.filter((p) => !p.ipBlock);
  const members = new Set(selectors.length === 0 ? []
    : m.pods.filter((pod) => selectors.some((p) => podPeerMatches(m, p, ns, pod))));
  return { use, members, elems: elementsOf(use, members) };
}

/** The set's elements: its ipBlocks (minus except) and its members' addresses, merged. */
function elementsOf(use: SetUse, members: ReadonlySet<PodInfo>): string[] {
  const s = new RangeSet();
  for (const p of use.peers) if (p.ipBlock) s.addBlock(p.ipBlock);
  for (const pod of members) addPodIPs(s, pod);
  return s.elements(use.fam.f);
}
