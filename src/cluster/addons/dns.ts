// The cluster DNS addon as kubeadm installs it (cmd/kubeadm/app/phases/addons/dns): the
// ServiceAccount `coredns`, ClusterRole and ClusterRoleBinding `system:coredns`, the `coredns`
// ConfigMap (kubeadm's Corefile), the `coredns` Deployment (2 replicas, k8s-app=kube-dns) and
// the `kube-dns` Service at the tenth address of the primary service CIDR (10.96.0.10), with
// its IPv6 counterpart in dual stack. The pods run image `kdp/dns`: kdp's DNS server, which
// reads the Corefile the way CoreDNS does (`-conf /etc/coredns/Corefile`).

import { isKdpError } from '../../errors.js';
import { nthAddress } from '../../api/net.js';
import { DNS_SERVICE_IP_INDEX } from '../../api/service-cidr.js';
import type { Client, KubeObject, ResourceRef } from '../../client/types.js';

export const DNS_IMAGE = 'kdp/dns';
export const DNS_NAMESPACE = 'kube-system';
export const DNS_SERVICE_NAME = 'kube-dns';
export const DNS_DEPLOYMENT_NAME = 'coredns';

/** kubeadm's Corefile (v1.33 template, upstream nameserver /etc/resolv.conf). */
export function kubeadmCorefile(zone: string): string {
  return `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${zone} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success ${zone}
       disable denial ${zone}
    }
    loop
    reload
    loadbalance
}
`;
}

export interface DnsAddonOptions {
  /** The cluster's service CIDRs, primary first. */
  readonly serviceCIDRs: readonly string[];
  /** Default cluster.local. */
  readonly zone?: string;
  readonly replicas?: number;
}

/** The addon's objects with the API resource each is created in, in creation order. */
export function dnsAddonObjects(o: DnsAddonOptions): Array<{ ref: ResourceRef; obj: KubeObject }> {
  const zone = o.zone ?? 'cluster.local';
  const ns = DNS_NAMESPACE;
  const labels = { 'k8s-app': 'kube-dns' };
  const clusterIPs = o.serviceCIDRs.map((c) => nthAddress(c, DNS_SERVICE_IP_INDEX));
  const core = (resource: string, namespace?: string): ResourceRef =>
    ({ group: '', version: 'v1', resource, ...(namespace ? { namespace } : {}) });
  const rbac = (resource: string): ResourceRef =>
    ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource });
  return [
    { ref: core('serviceaccounts', ns), obj: { apiVersion: 'v1', kind: 'ServiceAccount',
      metadata: { name: 'coredns', namespace: ns } } },
    { ref: rbac('clusterroles'), obj: { apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole', metadata: { name: 'system:coredns' }, rules: [
        { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'],
          verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ] } },
    { ref: rbac('clusterrolebindings'), obj: { apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding', metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: ns }] } },
    { ref: core('configmaps', ns), obj: { apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'coredns', namespace: ns }, data: { Corefile: kubeadmCorefile(zone) } } },
    { ref: { group: 'apps', version: 'v1', resource: 'deployments', namespace: ns },
      obj: deployment(o.replicas ?? 2, labels) },
    { ref: core('services', ns), obj: { apiVersion: 'v1', kind: 'Service',
      metadata: { name: DNS_SERVICE_NAME, namespace: ns,
        labels: { ...labels, 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' },
        annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' } },
      spec: {
        selector: labels, clusterIP: clusterIPs[0], clusterIPs,
        ipFamilyPolicy: clusterIPs.length > 1 ? 'RequireDualStack' : 'SingleStack',
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
          { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
        ],
      } } },
  ];
}

function deployment(replicas: number, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: DNS_DEPLOYMENT_NAME, namespace: DNS_NAMESPACE, labels },
    spec: {
      replicas,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          priorityClassName: 'system-cluster-critical',
          serviceAccountName: 'coredns',
          affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{
            weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname',
              labelSelector: { matchExpressions: [{ key: 'k8s-app', operator: 'In',
                values: ['kube-dns'] }] } } }] } },
          tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' },
            { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          containers: [{
            name: 'coredns', image: DNS_IMAGE, imagePullPolicy: 'IfNotPresent',
            resources: { limits: { memory: '170Mi' }, requests: { cpu: '100m', memory: '70Mi' } },
            args: ['-conf', '/etc/coredns/Corefile'],
            volumeMounts: [{ name: 'config-volume', mountPath: '/etc/coredns', readOnly: true }],
            ports: [
              { containerPort: 53, name: 'dns', protocol: 'UDP' },
              { containerPort: 53, name: 'dns-tcp', protocol: 'TCP' },
              { containerPort: 9153, name: 'metrics', protocol: 'TCP' },
            ],
            livenessProbe: { httpGet: { path: '/health', port: 8080, scheme: 'HTTP' },
              initialDelaySeconds: 60, timeoutSeconds: 5, successThreshold: 1, failureThreshold: 5 },
            readinessProbe: { httpGet: { path: '/ready', port: 8181, scheme: 'HTTP' } },
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true,
              capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] } },
          }],
          dnsPolicy: 'Default',
          volumes: [{ name: 'config-volume', configMap: { name: 'coredns',
            items: [{ key: 'Corefile', path: 'Corefile' }] } }],
        },
      },
    },
  };
}

/**
 * Creates what is missing of the addon (kubeadm's addon phase); objects that exist are left as
 * they are, so a restarted cluster keeps any change made to them.
 */
export async function ensureDnsAddon(client: Client, o: DnsAddonOptions): Promise<string[]> {
  const created: string[] = [];
  for (const { ref, obj } of dnsAddonObjects(o)) {
    try {
      await client.create(ref, obj);
      created.push(`${obj.kind}/${obj.metadata.name}`);
    } catch (e) {
      if (!isKdpError(e, 'KDP_ALREADY_EXISTS')) throw e;
    }
  }
  return created;
}
