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
//
// Between hosts (issue 19) it is flannel's daemon: the DaemonSet's KDP_BACKEND (host-gw, vxlan,
// auto; cni/backend.ts) chooses the path to each peer; with vxlan it makes the node's VTEP,
// publishes its MAC on the Node (flannel's annotations) and keeps one FDB, neighbour and route
// entry per VXLAN peer (host/vxlan.ts), all from the Node objects. With KDP_ROUTES=cloud the
// host-gw routes are the lab cloud's route controller's (controllers/route/) and the agent leaves
// them alone, as a CNI does beside a cloud that routes pod CIDRs.

import type { Node } from '../../api/types.js';
import type { InformerFactory } from '../../client/informer.js';
import type { Client, KubeObject, ResourceRef } from '../../client/types.js';
import {
  backendAnnotations, netNodeOf, parseBackend, planPeers, usesVxlan, type Backend,
} from '../../cni/backend.js';
import { ensureVtep, syncVxlanPeers, vtepMac } from '../../host/vxlan.js';
import { loadTopology } from '../../host/topology.js';
import type { HostComponent } from '../../kubelet/host-components.js';
import type { NetnsDataPlane } from '../data-plane-netns.js';

export const KDP_CNI_NAME = 'kdp-cni';
export const KDP_CNI_IMAGE = 'kdp/cni:v0.1.0';
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const DAEMONSETS = { group: 'apps', version: 'v1', resource: 'daemonsets', namespace: 'kube-system' } as const;

/** Who keeps the host-gw routes: the agent (kindnet, flannel host-gw) or the cloud's route
 *  controller. */
export type RouteOwner = 'agent' | 'cloud';

export function kdpCniAddonObjects(o: {
  clusterCIDRs: readonly string[]; image?: string; backend?: Backend; routes?: RouteOwner;
}): Array<{ ref: ResourceRef; obj: KubeObject }> {
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
                { name: 'KDP_BACKEND', value: o.backend ?? 'host-gw' },
                { name: 'KDP_ROUTES', value: o.routes ?? 'agent' },
              ],
              resources: { requests: { cpu: '100m', memory: '50Mi' }, limits: { cpu: '100m', memory: '50Mi' } },
              securityContext: { privileged: false, capabilities: { add: ['NET_RAW', 'NET_ADMIN'] } },
            }],
          },
        },
      } } },
  ];
}

/** The pod's env value (the DaemonSet's settings, as flannel's net-conf.json). */
function envOf(pod: { spec?: { containers?: Array<{ env?: Array<{ name: string; value?: string }> }> } }, name: string): string | undefined {
  return pod.spec?.containers?.[0]?.env?.find((e) => e.name === name)?.value;
}

/** The pod network a node joins, from the kdp-cni DaemonSet's settings (POD_SUBNET,
 *  KDP_BACKEND), as a flannel node reads net-conf.json: what a node with a data dir of its own
 *  (`kdp node join`) needs before its agent runs (the pods' MTU, the masquerade exclusion).
 *  Undefined when the cluster has no kdp-cni DaemonSet. */
export async function readPodNetwork(client: Client): Promise<{ clusterCIDRs: string[]; backend: Backend } | undefined> {
  let ds: KubeObject & { spec?: { template?: Parameters<typeof envOf>[0] } };
  try {
    ds = await client.get(DAEMONSETS, KDP_CNI_NAME);
  } catch (e) {
    if ((e as { code?: string }).code === 'KDP_NOT_FOUND') return undefined;
    throw e;
  }
  const pod = ds.spec?.template ?? {};
  const cidrs = (envOf(pod, 'POD_SUBNET') ?? '').split(',').map((c) => c.trim()).filter(Boolean);
  return { clusterCIDRs: cidrs, backend: parseBackend(envOf(pod, 'KDP_BACKEND'), 'KDP_BACKEND') };
}

export function kdpCniComponent(d: {
  nodeName: string; informers: InformerFactory; netns?: NetnsDataPlane; onError: (e: unknown) => void;
  /** Publishes the node's backend annotations (VTEP MAC); absent: nothing is published. */
  client?: Client;
}): HostComponent {
  return {
    async start(pod, log) {
      const backend = parseBackend(envOf(pod, 'KDP_BACKEND'), 'KDP_BACKEND');
      const routesByCloud = envOf(pod, 'KDP_ROUTES') === 'cloud';
      const inf = d.informers.informerFor<Node>(NODES);
      await inf.waitForSync();
      let synced: string | undefined;
      let published: string | undefined;
      let vtep: string | undefined;
      let stopped = false;
      let chain: Promise<void> = Promise.resolve();
      /** The node's own side: its VTEP (vxlan) and the annotations its peers read. */
      const publishSelf = async (self: Node) => {
        const me = netNodeOf(self);
        const ip = me.ips.find((x) => !x.includes(':'));
        const cidr = me.podCIDRs.find((c) => !c.includes(':'));
        if (!ip) return;
        const ns = d.netns?.topo.nodeNetns(d.nodeName);
        if (usesVxlan(backend) && cidr && vtep === undefined) {
          vtep = ns ? await ensureVtep(d.netns!.exec, ns, { localIP: ip, dev: d.netns!.topo.spec.node.uplink, podCIDR: cidr })
            : vtepMac(ip);
          log(`I VTEP ${vtep} for ${cidr} on ${ip} (VNI 1, UDP 8472)`);
        }
        const underlayCIDR = d.netns ? d.netns.topo.hostOf(d.nodeName).cidr : loadTopology().underlay.cidr;
        const want = backendAnnotations({ backend, nodeIP: ip, underlayCIDR, ...(vtep ? { vtepMac: vtep } : {}) });
        const key = JSON.stringify(want);
        const have = self.metadata.annotations ?? {};
        if (published === key || Object.entries(want).every(([k, v]) => have[k] === v) || !d.client) {
          published = key;
          return;
        }
        await d.client.patch(NODES, d.nodeName, 'merge', { metadata: { annotations: want } });
        published = key;
      };
      const sync = () => {
        chain = chain.then(async () => {
          if (stopped) return;
          const nodes = inf.cache.list();
          const self = nodes.find((n) => n.metadata.name === d.nodeName);
          if (self) await publishSelf(self);
          const me = self ? netNodeOf(self) : { name: d.nodeName, ips: [], podCIDRs: [], backend };
          const plan = planPeers({ ...me, backend }, nodes.map(netNodeOf));
          const hostGw = routesByCloud ? [] : plan.hostGw;
          const key = JSON.stringify([hostGw, plan.vxlan]);
          if (key === synced) return;
          if (d.netns && !routesByCloud) await d.netns.topo.syncRoutes(d.nodeName, hostGw);
          if (d.netns && (vtep || plan.vxlan.length)) {
            await syncVxlanPeers(d.netns.exec, d.netns.topo.nodeNetns(d.nodeName), plan.vxlan);
          }
          synced = key;
          const gw = routesByCloud ? 'host-gw routes: the cloud\'s' : `routes to ${hostGw.map((p) =>
            `${p.name} (${p.podCIDRs.join(', ')} via ${p.ips.join(', ')})`).join('; ') || 'no other node'}`;
          const vx = plan.vxlan.length ? `; vxlan to ${plan.vxlan.map((p) => `${p.name} (${p.podCIDR} via ` +
            `${p.vtepIP} ${p.mac} at ${p.underlayIP})`).join('; ')}` : '';
          log(`I ${gw}${vx}`);
        }).catch((e: Error) => { log(`E syncing routes: ${e.message}`); d.onError(e); });
      };
      // Heartbeats (status conditions) change no route: only addresses, podCIDRs and the
      // backend annotations count.
      const routeKey = (n: Node) => JSON.stringify(netNodeOf(n));
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
