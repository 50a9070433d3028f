// Seeded generator of realistic pod JSON (~1.5-2 KB, as the API server would store it).

export { seededRng as mulberry32 } from '../src/scheduler/rng.js';

const APPS = ['web', 'api', 'cache', 'worker', 'gateway', 'auth', 'search', 'billing'];
const IMAGES = ['nginx:1.27', 'redis:7.2', 'registry.k8s.io/pause:3.10', 'ghcr.io/acme/api:v2.3.1'];

export interface PodRef {
  readonly key: string;
  readonly json: string;
}

/**
 * Pod number `i` of a seeded population spread over 50 namespaces and 100 nodes. `running`
 * pods (~1.95 KB) carry the kubelet's status; `pending` ones (~1.45 KB) are only scheduled.
 */
export function podJson(
  rnd: () => number, i: number, phase: 'running' | 'pending' = 'running',
): PodRef {
  const hex = (n: number) =>
    Array.from({ length: n }, () => Math.floor(rnd() * 16).toString(16)).join('');
  const app = APPS[Math.floor(rnd() * APPS.length)]!;
  const ns = `ns-${Math.floor(rnd() * 50)}`;
  const hash = hex(10);
  const name = `${app}-${hash}-${hex(5)}-${i}`;
  const node = `node-${Math.floor(rnd() * 100)}`;
  const at = new Date(Date.UTC(2026, 0, 1) + Math.floor(rnd() * 1e9));
  const ts = at.toISOString().slice(0, 19) + 'Z';
  const uid = `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
  const ip = `10.244.${Math.floor(rnd() * 100)}.${2 + Math.floor(rnd() * 250)}`;
  const cond = (type: string) =>
    ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: ts });
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name, namespace: ns, uid, resourceVersion: String(1000 + i), creationTimestamp: ts,
      generateName: `${app}-${hash}-`,
      labels: { app, 'pod-template-hash': hash, tier: rnd() < 0.5 ? 'frontend' : 'backend' },
      ownerReferences: [{
        apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-${hash}`,
        uid: `${hex(8)}-${hex(4)}`,
        controller: true, blockOwnerDeletion: true,
      }],
    },
    spec: {
      containers: [{
        name: app, image: IMAGES[Math.floor(rnd() * IMAGES.length)],
        imagePullPolicy: 'IfNotPresent',
        ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
        resources: {
          limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' },
        },
        volumeMounts: [{
          name: `kube-api-access-${hex(5)}`, readOnly: true,
          mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
        }],
      }],
      restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default', nodeName: node, schedulerName: 'default-scheduler',
      enableServiceLinks: true, priority: 0,
    },
    status: phase === 'pending' ? {
      phase: 'Pending', conditions: [cond('PodScheduled')], qosClass: 'Burstable',
    } : {
      phase: 'Running',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(cond),
      hostIP: `172.18.0.${2 + Math.floor(rnd() * 100)}`, podIP: ip, podIPs: [{ ip }], startTime: ts,
      containerStatuses: [{
        name: app, ready: true, restartCount: 0, image: 'nginx:1.27', started: true,
        containerID: `containerd://${hex(64)}`,
        state: { running: { startedAt: ts } }, lastState: {},
      }],
      qosClass: 'Burstable',
    },
  };
  return { key: `/registry/pods/${ns}/${name}`, json: JSON.stringify(pod) };
}
