// kube-proxy as kubeadm installs it (cmd/kubeadm/app/phases/addons/proxy): the ConfigMap
// `kube-proxy` (key `config.conf`: the KubeProxyConfiguration every node uses; `kubeconfig.conf`:
// the in-cluster kubeconfig over the pod's service-account token), the ServiceAccount
// `kube-proxy`, the ClusterRoleBinding `kubeadm:node-proxier` (system:node-proxier for that
// ServiceAccount), the Role and RoleBinding `kube-proxy` (reading that ConfigMap, for joining
// nodes' bootstrap tokens) and the DaemonSet `kube-proxy` (hostNetwork, system-node-critical,
// every taint tolerated, the ConfigMap at /var/lib/kube-proxy). Its pods run the image
// registry.k8s.io/kube-proxy; the kubelet runs kdp's kube-proxy for them (host-components.ts).

import { parseDocument } from 'yaml';
import { isKdpError, kdpError } from '../../errors.js';
import type { Client, KubeObject, ResourceRef } from '../../client/types.js';
import type { ProxyMode } from '../../proxy/backend.js';
import { parseKubeProxyConfiguration } from '../../proxy/config.js';

export const KUBE_PROXY_NAME = 'kube-proxy';
export const KUBE_PROXY_NAMESPACE = 'kube-system';
export const KUBE_PROXY_IMAGE = 'registry.k8s.io/kube-proxy:v1.33.0';
/** Where the ConfigMap is mounted in the pod, and the key kube-proxy's --config names. */
export const KUBE_PROXY_CONFIG_DIR = '/var/lib/kube-proxy';
export const KUBE_PROXY_CONFIG_KEY = 'config.conf';

/**
 * The config.conf kdp writes: `configText` (kdp up's --kube-proxy-config, or its default) with
 * `mode` set to --mode (kdp up's --mode wins over the file's, as it does for the in-process
 * proxy) and, when absent, `clientConnection.kubeconfig` pointing at the ConfigMap's
 * kubeconfig.conf as kubeadm's does. Comments and the other fields stay as given.
 */
export function kubeProxyConfigConf(configText: string, mode: ProxyMode): string {
  parseKubeProxyConfiguration(configText); // a bad file fails here, naming the field
  const doc = parseDocument(configText);
  doc.set('mode', mode);
  if (!doc.hasIn(['clientConnection', 'kubeconfig'])) {
    doc.setIn(['clientConnection', 'kubeconfig'], `${KUBE_PROXY_CONFIG_DIR}/kubeconfig.conf`);
  }
  return String(doc);
}

/** kubeadm's kubeconfig.conf: the API server endpoint, the pod's service-account CA and token. */
export function kubeProxyKubeconfig(server: string): string {
  return ['apiVersion: v1', 'kind: Config', 'clusters:', '- cluster:',
    '    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
    `    server: ${server}`, '  name: default', 'contexts:', '- context:', '    cluster: default',
    '    namespace: default', '    user: default', '  name: default', 'current-context: default',
    'users:', '- name: default', '  user:', '    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token',
  ].join('\n');
}

export interface KubeProxyAddonOptions {
  /** The config.conf text (kubeProxyConfigConf). */
  readonly configConf: string;
  /** The control-plane endpoint, `https://host:port`. */
  readonly server: string;
  readonly image?: string;
}

const core = (resource: string, namespace?: string): ResourceRef =>
  ({ group: '', version: 'v1', resource, ...(namespace ? { namespace } : {}) });
const rbac = (resource: string, namespace?: string): ResourceRef =>
  ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource, ...(namespace ? { namespace } : {}) });

/** The addon's objects with the API resource each is created in, in creation order. */
export function kubeProxyAddonObjects(o: KubeProxyAddonOptions): Array<{ ref: ResourceRef; obj: KubeObject }> {
  const ns = KUBE_PROXY_NAMESPACE;
  const labels = { 'k8s-app': KUBE_PROXY_NAME };
  return [
    { ref: core('serviceaccounts', ns), obj: { apiVersion: 'v1', kind: 'ServiceAccount',
      metadata: { name: KUBE_PROXY_NAME, namespace: ns } } },
    { ref: rbac('clusterrolebindings'), obj: { apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding', metadata: { name: 'kubeadm:node-proxier' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-proxier' },
      subjects: [{ kind: 'ServiceAccount', name: KUBE_PROXY_NAME, namespace: ns }] } },
    { ref: rbac('roles', ns), obj: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role',
      metadata: { name: KUBE_PROXY_NAME, namespace: ns },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [KUBE_PROXY_NAME], verbs: ['get'] }] } },
    { ref: rbac('rolebindings', ns), obj: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding',
      metadata: { name: KUBE_PROXY_NAME, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: KUBE_PROXY_NAME },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:bootstrappers:kubeadm:default-node-token' }] } },
    { ref: core('configmaps', ns), obj: { apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: KUBE_PROXY_NAME, namespace: ns, labels: { app: KUBE_PROXY_NAME } },
      data: { 'kubeconfig.conf': kubeProxyKubeconfig(o.server), [KUBE_PROXY_CONFIG_KEY]: o.configConf } } },
    { ref: { group: 'apps', version: 'v1', resource: 'daemonsets', namespace: ns }, obj: {
      apiVersion: 'apps/v1', kind: 'DaemonSet',
      metadata: { name: KUBE_PROXY_NAME, namespace: ns, labels },
      spec: {
        selector: { matchLabels: labels },
        updateStrategy: { type: 'RollingUpdate' },
        template: {
          metadata: { labels },
          spec: {
            priorityClassName: 'system-node-critical',
            containers: [{
              name: KUBE_PROXY_NAME, image: o.image ?? KUBE_PROXY_IMAGE, imagePullPolicy: 'IfNotPresent',
              command: ['/usr/local/bin/kube-proxy', `--config=${KUBE_PROXY_CONFIG_DIR}/${KUBE_PROXY_CONFIG_KEY}`,
                '--hostname-override=$(NODE_NAME)'],
              securityContext: { capabilities: { add: ['NET_ADMIN', 'SYS_MODULE'] } },
              volumeMounts: [
                { mountPath: KUBE_PROXY_CONFIG_DIR, name: KUBE_PROXY_NAME },
                { mountPath: '/run/xtables.lock', name: 'xtables-lock', readOnly: false },
                { mountPath: '/lib/modules', name: 'lib-modules', readOnly: true },
              ],
              env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
            }],
            hostNetwork: true,
            serviceAccountName: KUBE_PROXY_NAME,
            volumes: [
              { name: KUBE_PROXY_NAME, configMap: { name: KUBE_PROXY_NAME } },
              { name: 'xtables-lock', hostPath: { path: '/run/xtables.lock', type: 'FileOrCreate' } },
              { name: 'lib-modules', hostPath: { path: '/lib/modules' } },
            ],
            tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }, { operator: 'Exists' }],
            nodeSelector: { 'kubernetes.io/os': 'linux' },
          },
        },
      } } },
  ];
}

/** Creates what is missing (kubeadm's addon phase); what exists is kept, edits included. */
export async function ensureObjects(client: Client, objects: Array<{ ref: ResourceRef; obj: KubeObject }>): Promise<string[]> {
  const created: string[] = [];
  for (const { ref, obj } of objects) {
    try {
      await client.create(ref, obj);
      created.push(`${obj.kind}/${obj.metadata.name}`);
    } catch (e) {
      if (!isKdpError(e, 'KDP_ALREADY_EXISTS')) throw e;
    }
  }
  return created;
}

export async function ensureKubeProxyAddon(client: Client, o: KubeProxyAddonOptions): Promise<string[]> {
  return ensureObjects(client, kubeProxyAddonObjects(o));
}

interface PodLike {
  readonly spec?: {
    readonly containers?: ReadonlyArray<{ command?: string[]; args?: string[]; volumeMounts?: Array<{ name: string; mountPath: string }> }>;
    readonly volumes?: ReadonlyArray<{ name: string; configMap?: { name?: string } }>;
  };
}

/**
 * Where a kube-proxy pod's `--config` file comes from: the ConfigMap volume mounted over the
 * file's directory and the key that is the file's name. KDP_CONFIG naming the field when the
 * pod has no --config, or the file is not in a ConfigMap volume.
 */
export function kubeProxyConfigSource(pod: PodLike): { configMap: string; key: string } {
  const c = pod.spec?.containers?.[0];
  const argv = [...(c?.command ?? []), ...(c?.args ?? [])];
  const flag = argv.find((a) => a.startsWith('--config='));
  if (!flag) throw kdpError('KDP_CONFIG', 'spec.containers[0].command: kube-proxy needs --config=<file> (kdp runs kube-proxy from a ConfigMap file)');
  const file = flag.slice('--config='.length);
  const mount = (c?.volumeMounts ?? []).find((m) => file.startsWith(`${m.mountPath.replace(/\/$/, '')}/`));
  const vol = mount && pod.spec?.volumes?.find((v) => v.name === mount.name);
  if (!mount || !vol?.configMap?.name) {
    throw kdpError('KDP_CONFIG', `spec.containers[0].command: --config=${file} is not in a configMap volume's mount`);
  }
  return { configMap: vol.configMap.name, key: file.slice(mount.mountPath.replace(/\/$/, '').length + 1) };
}
