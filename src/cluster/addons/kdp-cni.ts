// The pod network as a DaemonSet, kindnet-style (kind's images/kindnetd): `kdp-cni` pods in
// kube-system (image kdp/cni, hostNetwork, every taint tolerated, one per node) with their
// ServiceAccount and ClusterRole (nodes: list/watch, as kindnet's). The kubelet runs each pod's
// agent in its own process (host-components.ts). The agent does what kindnetd's route loop
// does: for every other Node, a route to its podCIDRs via its InternalIP of that family, kept in
// step with the Node objects (netns mode: in the node's namespace, `ip route replace`; virtual
// mode: there is no kernel, the agent only follows the nodes). The pods' own wiring is the CNI
// plugin's (the kubelet calls it per pod). When the agent stops (its pod deleted) the routes
// stay, as kindnetd leaves them: running pods keep their traffic; the next agent takes over.
// Ready once the node's routes were synced.

import type { Node } from '../../api/types.js';
import type { InformerFactory } from '../../client/informer.js';
import type { KubeObject, ResourceRef } from '../../client/types.js';
import type { HostComponent } from '../../kubelet/host-components.js';
import type { NetnsDataPlane } from '../data-plane-netns.js';

export const KDP_CNI_NAME = 'kdp-cni';
export const KDP_CNI_IMAGE = 'kdp/cni:v0.1.0';
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

export function kdpCniAddonObjects(o: { clusterCIDRs: readonly string[]; image?: string }): Array<{ ref: ResourceRef; obj: KubeObject }> {
  const ns = 'kube-system';
  const labels = { app: KDP_CNI_NAME, 'k8s-app': KDP_CNI_NAME, tier: 'node' };
  return [
    { ref: { group: '', version: 'v1', resource: 'serviceaccounts', namespace: ns }, obj: {
      apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: KDP_CNI_NAME, namespace: ns } } },
    { ref: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' }, obj: {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: KDP_CNI_NAME },
      rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch', 'patch'] }] } },
    { ref: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings' }, obj: {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: KDP_CNI_NAME },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: KDP_CNI_NAME },
      subjects: [{ kind: 'ServiceAccount', name: KDP_CNI_NAME, namespace: ns }] } },
    { ref: { group: 'apps', version: 'v1', resource: 'daemonsets', namespace: ns }, obj: {
      apiVersion: 'apps/v1', kind: 'DaemonSet',
      metadata: { name: KDP_CNI_NAME, namespace: ns, labels },
      spec: {
        selector: { matchLabels: { app: KDP_CNI_NAME } },
        updateStrategy: { type: 'RollingUpdate' },
        template: {
          metadata: { labels },
          spec: {
            hostNetwork: true,
            priorityClassName: 'system-node-critical',
            serviceAccountName: KDP_CNI_NAME,
            tolerations: [{ operator: 'Exists' }],
            nodeSelector: { 'kubernetes.io/os': 'linux' },
            containers: [{
              name: 'kdp-cni', image: o.image ?? KDP_CNI_IMAGE, imagePullPolicy: 'IfNotPresent',
              env: [
                { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
                { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                { name: 'POD_SUBNET', value: o.clusterCIDRs.join(',') },
              ],
              resources: { requests: { cpu: '100m', memory: '50Mi' }, limits: { cpu: '100m', memory: '50Mi' } },
              securityContext: { privileged: false, capabilities: { add: ['NET_RAW', 'NET_ADMIN'] } },
            }],
          },
        },
      } } },
  ];
}

interface RoutePeer { name: string; ips: string[]; podCIDRs: string[] }

/** The other nodes' pod CIDRs and InternalIPs (what the routes point at), in name order. */
export function routePeers(nodes: readonly Node[], self: string): RoutePeer[] {
  return nodes.filter((n) => n.metadata.name !== self).map((n) => ({
    name: n.metadata.name!,
    ips: (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address),
    podCIDRs: n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []),
  })).filter((p) => p.ips.length > 0 && p.podCIDRs.length > 0)
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function kdpCniComponent(d: {
  nodeName: string; informers: InformerFactory; netns?: NetnsDataPlane; onError: (e: unknown) => void;
}): HostComponent {
  return {
    async start(_pod, log) {
      const inf = d.informers.informerFor<Node>(NODES);
      await inf.waitForSync();
      let synced: string | undefined;
      let stopped = false;
      let chain: Promise<void> = Promise.resolve();
      const sync = () => {
        chain = chain.then(async () => {
          if (stopped) return;
          const peers = routePeers(inf.cache.list(), d.nodeName);
          const key = JSON.stringify(peers);
          if (key === synced) return;
          if (d.netns) await d.netns.topo.syncRoutes(d.nodeName, peers);
          synced = key;
          log(`I routes to ${peers.map((p) => `${p.name} (${p.podCIDRs.join(', ')} via ${p.ips.join(', ')})`).join('; ') || 'no other node'}`);
        }).catch((e: Error) => { log(`E syncing routes: ${e.message}`); d.onError(e); });
      };
      // Heartbeats (status conditions) change no route: only addresses and podCIDRs count.
      const routeKey = (n: Node) => JSON.stringify([n.spec?.podCIDRs ?? n.spec?.podCIDR,
        (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP')]);
      const unsub = inf.addEventHandler({ onAdd: sync, onDelete: sync,
        onUpdate: (a, b) => { if (routeKey(a) !== routeKey(b)) sync(); } });
      sync();
      await chain;
      log(`I kdp-cni agent on node ${d.nodeName}: handling node routes`);
      return {
        ready: () => synced !== undefined,
        async stop() { stopped = true; unsub(); await chain; },
      };
    },
  };
}
