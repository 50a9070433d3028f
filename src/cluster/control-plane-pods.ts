// kdp's control plane as kubeadm lays it out on a control-plane node: static pods
// kube-apiserver, kube-controller-manager and kube-scheduler in kube-system (labels
// component=<name>, tier=control-plane; hostNetwork; system-node-critical; every NoExecute
// taint tolerated), their command lines those of the flags kdp runs them with. They run inside
// `kdp up`'s process, so that process's PID is theirs. The node gets kubeadm's role label
// `node-role.kubernetes.io/control-plane` (set by the admin, as kubeadm does: a kubelet may not
// label itself with a role); unlike kubeadm's, the node keeps taking workloads (no taint), so a
// two-node lab uses both nodes.

import type { Pod } from '../api/types.js';
import { GIT_VERSION } from '../apiserver/version.js';
import type { Client, KubeObject } from '../client/types.js';
import type { StaticPod } from '../kubelet/static-pods.js';

export const CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';

export interface ControlPlaneFlags {
  readonly advertiseAddress: string;
  readonly securePort: number;
  readonly serviceCIDRs: readonly string[];
  readonly clusterCIDRs: readonly string[];
  readonly etcdServers?: readonly string[];
}

function manifest(component: string, command: string[], annotations: Record<string, string> = {}): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: component, namespace: 'kube-system', labels: { component, tier: 'control-plane' },
      ...(Object.keys(annotations).length ? { annotations } : {}) },
    spec: {
      hostNetwork: true, priorityClassName: 'system-node-critical', priority: 2000001000,
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      tolerations: [{ effect: 'NoExecute', operator: 'Exists' }],
      // Requests of zero, said explicitly (kubeadm's ask 100–250m CPU, and none would count as
      // the scheduler's 100m default): they share kdp's process, and the scheduler should not
      // steer a lab's pods off the control-plane node for them.
      containers: [{ name: component, image: `kdp/${component}:${GIT_VERSION}`, command,
        imagePullPolicy: 'IfNotPresent', resources: { requests: { cpu: '0', memory: '0' } } }],
      restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', enableServiceLinks: true,
    },
  } as unknown as Pod;
}

export function controlPlanePods(f: ControlPlaneFlags): StaticPod[] {
  const pid = process.pid;
  const endpoint = `${f.advertiseAddress.includes(':') ? `[${f.advertiseAddress}]` : f.advertiseAddress}:${f.securePort}`;
  return [
    manifest('kube-apiserver', ['kube-apiserver', `--advertise-address=${f.advertiseAddress}`,
      '--allow-privileged=true', '--authorization-mode=Node,RBAC', '--client-ca-file=/etc/kubernetes/pki/ca.crt',
      '--enable-admission-plugins=NodeRestriction', '--enable-bootstrap-token-auth=true',
      ...(f.etcdServers?.length ? [`--etcd-servers=${f.etcdServers.join(',')}`] : []),
      `--secure-port=${f.securePort}`, '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--service-account-key-file=/etc/kubernetes/pki/sa.pub',
      '--service-account-signing-key-file=/etc/kubernetes/pki/sa.key',
      `--service-cluster-ip-range=${f.serviceCIDRs.join(',')}`],
    { 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint': endpoint }),
    manifest('kube-controller-manager', ['kube-controller-manager', '--allocate-node-cidrs=true',
      `--cluster-cidr=${f.clusterCIDRs.join(',')}`, '--cluster-name=kdp', '--controllers=*,bootstrapsigner,tokencleaner',
      '--leader-elect=true', '--root-ca-file=/etc/kubernetes/pki/ca.crt',
      `--service-cluster-ip-range=${f.serviceCIDRs.join(',')}`, '--use-service-account-credentials=true']),
    manifest('kube-scheduler', ['kube-scheduler', '--bind-address=127.0.0.1', '--leader-elect=true']),
  ].map((m) => ({ manifest: m, pid }));
}

/** kubeadm's mark-control-plane phase, without the taint (see the header). */
/** kubeadm's taint on control-plane nodes (kind keeps it when a cluster has workers). */
export const CONTROL_PLANE_TAINT = { key: CONTROL_PLANE_LABEL, effect: 'NoSchedule' } as const;

/** kubeadm's mark-control-plane phase: the role label, and with `taint` its NoSchedule taint
 *  (added beside any taints the node has). */
export async function markControlPlane(admin: Client, node: string, o: { readonly taint?: boolean } = {}): Promise<void> {
  const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
  await admin.patch(NODES, node, 'merge', { metadata: { labels: { [CONTROL_PLANE_LABEL]: '' } } });
  if (!o.taint) return;
  const current = await admin.get<KubeObject & { spec?: { taints?: Array<{ key: string; effect: string }> } }>(NODES, node);
  const taints = current.spec?.taints ?? [];
  if (taints.some((t) => t.key === CONTROL_PLANE_TAINT.key && t.effect === CONTROL_PLANE_TAINT.effect)) return;
  await admin.patch(NODES, node, 'merge', { spec: { taints: [...taints, { ...CONTROL_PLANE_TAINT }] } });
}
