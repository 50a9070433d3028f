import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type {
  Deployment, EndpointSlice, Job, Pod, Service, ServiceCIDR,
} from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';

const fields = (n: KubeObject, o: KubeObject): string[] =>
  validate(n, o).map((c) => `${c.field} ${c.reason}`);

function change<T extends KubeObject>(o: T, f: (x: T) => void): T {
  const c = structuredClone(o);
  f(c);
  return c;
}

const svc: Service = applyDefaults({ apiVersion: 'v1', kind: 'Service',
  metadata: { name: 's', namespace: 'default', uid: 'u1' },
  spec: { clusterIP: '10.96.0.5', ports: [{ port: 80 }] } } as Service);

describe('immutable fields on update', () => {
  it('keeps metadata name, namespace and uid', () => {
    const n = change(svc, (s) => { s.metadata.uid = 'u2'; s.metadata.namespace = 'other'; });
    expect(fields(n, svc)).toEqual(['metadata.namespace FieldValueInvalid',
      'metadata.uid FieldValueInvalid']);
    expect(validate(n, svc)[0]!.message).toBe('Invalid value: "other": field is immutable');
  });
  it('keeps a service clusterIP unless the type becomes ExternalName', () => {
    const moved = change(svc,
      (s) => { s.spec!.clusterIP = '10.96.0.6'; s.spec!.clusterIPs = ['10.96.0.6']; });
    expect(fields(moved, svc)).toEqual(['spec.clusterIPs[0] FieldValueInvalid']);
    expect(validate(moved, svc)[0]!.message).toContain('may not change once set');
    const toExternal = change(svc, (s) => {
      s.spec = { type: 'ExternalName', externalName: 'x.example.com', sessionAffinity: 'None' };
    });
    expect(validate(toExternal, svc)).toEqual([]);
  });
  it('lets a dual-stack service drop its secondary IP only as SingleStack', () => {
    const dual = change(svc, (s) => {
      s.spec!.clusterIPs = ['10.96.0.5', 'fd00::5'];
      s.spec!.ipFamilies = ['IPv4', 'IPv6'];
      s.spec!.ipFamilyPolicy = 'RequireDualStack';
    });
    const down = change(dual, (s) => {
      s.spec!.clusterIPs = ['10.96.0.5'];
      s.spec!.ipFamilies = ['IPv4'];
    });
    expect(validate(down, dual).map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be set to \'SingleStack\' '
        + 'when releasing the secondary clusterIP',
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be set to \'SingleStack\' '
        + 'when releasing the secondary ipFamily',
    ]);
    const ok = change(down, (s) => { s.spec!.ipFamilyPolicy = 'SingleStack'; });
    expect(validate(ok, dual)).toEqual([]);
  });
  it('keeps workload selectors', () => {
    const d: Deployment = applyDefaults({ apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'd', namespace: 'default' },
      spec: { selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b', c: 'd' } },
          spec: { containers: [{ name: 'c', image: 'i:1' }] } } } } as Deployment);
    const n = change(d, (x) => { x.spec!.selector = { matchLabels: { c: 'd' } }; });
    expect(fields(n, d)).toEqual(['spec.selector FieldValueInvalid']);
    const scaled = change(d, (x) => { x.spec!.replicas = 5; });
    expect(validate(scaled, d)).toEqual([]);
  });
  it('keeps a running Job template', () => {
    const j: Job = applyDefaults({ apiVersion: 'batch/v1', kind: 'Job',
      metadata: { name: 'j', namespace: 'default' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } },
        spec: { containers: [{ name: 'c', image: 'i:1' }], restartPolicy: 'Never' } } } } as Job);
    const n = change(j, (x) => { x.spec!.template.spec!.containers[0]!.image = 'i:2'; });
    expect(fields(n, j)).toEqual(['spec.template FieldValueInvalid']);
  });
  it('lets a pod change only images, deadlines and add tolerations', () => {
    const p: Pod = applyDefaults({ apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'i:1' }], tolerations: [{ key: 'a',
        operator: 'Exists' }] },
    } as Pod);
    const ok = change(p, (x) => {
      x.spec!.containers[0]!.image = 'i:2';
      x.spec!.activeDeadlineSeconds = 30;
      x.spec!.tolerations!.push({ key: 'b', operator: 'Exists' });
    });
    expect(validate(ok, p)).toEqual([]);
    const bad = change(p, (x) => { x.spec!.nodeName = 'n1'; x.spec!.tolerations = []; });
    expect(fields(bad, p)).toEqual(['spec.tolerations FieldValueForbidden',
      'spec FieldValueForbidden']);
    expect(validate(bad, p)[1]!.message).toMatch(
      /^Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`/);
  });
  it('accepts pod status writes without re-checking the spec', () => {
    const p: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd' },
      spec: { containers: [] } };
    const n = change(p, (x) => { x.status = { phase: 'Running', podIP: '10.0.0.1',
      podIPs: [{ ip: '10.0.0.1' }] }; });
    expect(validate(n, p, { subresource: 'status' })).toEqual([]);
  });
  it('keeps EndpointSlice address type and ServiceCIDR ranges', () => {
    const es: EndpointSlice = applyDefaults({ apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice', metadata: { name: 'e', namespace: 'default' }, addressType: 'IPv4',
      endpoints: [] });
    expect(fields(change(es, (x) => { x.addressType = 'IPv6'; }), es))
      .toEqual(['addressType FieldValueInvalid']);
    const sc: ServiceCIDR = { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR',
      metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.96.0.0/12'] } };
    expect(fields(change(sc, (x) => { x.spec!.cidrs = ['10.96.0.0/16']; }), sc))
      .toEqual(['spec.cidrs FieldValueInvalid']);
  });
});
