import { describe, expect, it } from 'vitest';
import { applyDefaults, imageTag } from '../../src/api/defaults.js';
import type {
  DaemonSet, Deployment, EndpointSlice, Job, Namespace, Pod, RoleBinding, Service,
} from '../../src/api/types.js';

describe('Pod defaulting', () => {
  it('fills the PodSpec and container defaults as upstream', () => {
    const pod: Pod = applyDefaults({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' },
      spec: {
        containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }],
          readinessProbe: { httpGet: { port: 80 } } }],
        tolerations: [{ key: 'k', operator: 'Exists' }],
      },
    } as Pod);
    const s = pod.spec!;
    expect(s.restartPolicy).toBe('Always');
    expect(s.dnsPolicy).toBe('ClusterFirst');
    expect(s.terminationGracePeriodSeconds).toBe(30);
    expect(s.schedulerName).toBe('default-scheduler');
    expect(s.enableServiceLinks).toBe(true);
    expect(s.securityContext).toEqual({});
    expect(s.tolerations).toEqual([{ key: 'k', operator: 'Exists' }]);
    const c = s.containers[0]!;
    expect(c.imagePullPolicy).toBe('Always');
    expect(c.terminationMessagePath).toBe('/dev/termination-log');
    expect(c.terminationMessagePolicy).toBe('File');
    expect(c.ports![0]!.protocol).toBe('TCP');
    expect(c.readinessProbe).toEqual({ httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  });
  it('defaults container requests to limits on pods', () => {
    const pod = applyDefaults({ apiVersion: 'v1', kind: 'Pod', metadata: {},
      spec: { containers: [{ name: 'c', image: 'x:1',
        resources: { limits: { cpu: '1' }, requests: { memory: '1Gi' } } }] } } as Pod);
    expect(pod.spec!.containers[0]!.resources!.requests).toEqual({ memory: '1Gi', cpu: '1' });
  });
  it('pulls tagged images IfNotPresent and :latest Always', () => {
    expect(imageTag('nginx')).toBe('latest');
    expect(imageTag('nginx:1.25')).toBe('1.25');
    expect(imageTag('localhost:5000/app')).toBe('latest');
    expect(imageTag('app@sha256:abc')).toBe('');
  });
  it('copies container ports to hostPort under hostNetwork', () => {
    const pod = applyDefaults({ apiVersion: 'v1', kind: 'Pod', metadata: {},
      spec: { hostNetwork: true, containers: [{ name: 'c', image: 'x:1',
        ports: [{ containerPort: 53, protocol: 'UDP' }] }] } } as Pod);
    expect(pod.spec!.containers[0]!.ports![0]).toEqual(
      { containerPort: 53, protocol: 'UDP', hostPort: 53 });
  });
});

describe('Service defaulting', () => {
  it('defaults a ClusterIP service', () => {
    const svc = applyDefaults({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' },
      spec: { selector: { app: 'a' }, ports: [{ port: 80 }, { port: 53, targetPort: 'dns' }] },
    } as Service);
    expect(svc.spec).toEqual({
      selector: { app: 'a' }, type: 'ClusterIP', sessionAffinity: 'None',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 },
        { port: 53, targetPort: 'dns', protocol: 'TCP' }],
      internalTrafficPolicy: 'Cluster', ipFamilyPolicy: 'SingleStack',
    });
  });
  it('defaults LoadBalancer traffic policy, node ports and ClientIP timeout', () => {
    const svc = applyDefaults({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' },
      spec: { type: 'LoadBalancer', sessionAffinity: 'ClientIP', ports: [{ port: 80 }] },
    } as Service);
    expect(svc.spec!.externalTrafficPolicy).toBe('Cluster');
    expect(svc.spec!.allocateLoadBalancerNodePorts).toBe(true);
    expect(svc.spec!.sessionAffinityConfig).toEqual({ clientIP: { timeoutSeconds: 10800 } });
  });
  it('gives selectorless headless services RequireDualStack and ExternalName no policies', () => {
    const h = applyDefaults({ apiVersion: 'v1', kind: 'Service', metadata: {},
      spec: { clusterIP: 'None' } } as Service);
    expect(h.spec!.ipFamilyPolicy).toBe('RequireDualStack');
    const en = applyDefaults({ apiVersion: 'v1', kind: 'Service', metadata: {},
      spec: { type: 'ExternalName', externalName: 'x.example' } } as Service);
    expect(en.spec!.internalTrafficPolicy).toBeUndefined();
    expect(en.spec!.ipFamilyPolicy).toBeUndefined();
  });
});

describe('workload defaulting', () => {
  it('defaults a Deployment and its template', () => {
    const d = applyDefaults({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: {},
      spec: { selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } },
          spec: { containers: [{ name: 'c', image: 'i:1' }] } } } } as Deployment);
    expect(d.spec!.replicas).toBe(1);
    expect(d.spec!.strategy).toEqual(
      { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    expect(d.spec!.revisionHistoryLimit).toBe(10);
    expect(d.spec!.progressDeadlineSeconds).toBe(600);
    expect(d.spec!.template.spec!.restartPolicy).toBe('Always');
    // Pod-only defaults (SetDefaults_Pod) stay off templates, as upstream.
    expect(d.spec!.template.spec!.enableServiceLinks).toBeUndefined();
  });
  it('defaults DaemonSet update strategy and Job counts', () => {
    const ds = applyDefaults({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: {},
      spec: { selector: {}, template: {} } } as DaemonSet);
    expect(ds.spec!.updateStrategy).toEqual(
      { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    const j = applyDefaults({ apiVersion: 'batch/v1', kind: 'Job', metadata: {},
      spec: { template: {} } } as Job);
    expect(j.spec).toMatchObject({ completions: 1, parallelism: 1, backoffLimit: 6,
      completionMode: 'NonIndexed', suspend: false, podReplacementPolicy: 'TerminatingOrFailed' });
  });
});

describe('other kinds', () => {
  it('labels namespaces and adds the kubernetes finalizer on create', () => {
    const ns = applyDefaults({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } },
      { onCreate: true }) as Namespace;
    expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'x' });
    expect(ns.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(ns.status).toEqual({ phase: 'Active' });
  });
  it('defaults EndpointSlice ports and RBAC subjects', () => {
    const es = applyDefaults({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: {}, addressType: 'IPv4', endpoints: [], ports: [{ port: 80 }] } as EndpointSlice);
    expect(es.ports).toEqual([{ port: 80, name: '', protocol: 'TCP' }]);
    const rb = applyDefaults({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding',
      metadata: {}, roleRef: { kind: 'Role', name: 'r', apiGroup: '' },
      subjects: [{ kind: 'User', name: 'u' }, { kind: 'ServiceAccount', name: 's' }],
    } as RoleBinding);
    expect(rb.roleRef.apiGroup).toBe('rbac.authorization.k8s.io');
    expect(rb.subjects!.map((s) => s.apiGroup)).toEqual(['rbac.authorization.k8s.io', '']);
  });
  it('is idempotent', () => {
    const mk = (): Service => ({ apiVersion: 'v1', kind: 'Service', metadata: {},
      spec: { type: 'NodePort', ports: [{ port: 1 }] } });
    const once = applyDefaults(mk());
    expect(applyDefaults(structuredClone(once))).toEqual(once);
  });
});
