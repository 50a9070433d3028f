// Strategic merge patch with the kinds' upstream patch metadata: lists merge only where the
// schema says so, by the schema's merge key, as kubectl computes its patches.

import { describe, expect, it } from 'vitest';
import { sharedPatchMeta } from '../../src/apiserver/openapi/unknown-fields.js';
import { applyStrategicMergePatch } from '../../src/apiserver/patch/strategic.js';

const meta = (apiVersion: string, kind: string) => sharedPatchMeta().forKind(apiVersion, kind)!;

describe('strategic merge patch driven by the upstream schema', () => {
  it('reads strategies and merge keys field by field', () => {
    const pod = meta('v1', 'Pod');
    const containers = pod.field('spec').field('containers');
    expect([containers.strategy, containers.mergeKey]).toEqual(['merge', 'name']);
    expect(containers.items.field('ports').mergeKey).toBe('containerPort');
    expect(pod.field('spec').field('volumes').strategy).toBe('merge,retainKeys');
    expect(pod.field('spec').field('tolerations').strategy).toBe('');
    expect(pod.field('metadata').field('labels').field('any').strategy).toBe('');
    expect(meta('apps/v1', 'Deployment').field('spec').field('strategy').strategy)
      .toBe('retainKeys');
    expect(sharedPatchMeta().forKind('v1', 'NoSuchKind')).toBeUndefined();
  });

  it('NetworkPolicy ports (atomic upstream) are replaced, not merged by port', () => {
    const np = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'n' },
      spec: { podSelector: {}, ingress: [{ ports: [{ port: 80 }, { port: 443 }] }] } };
    const out = applyStrategicMergePatch(np, { spec: { ingress: [{ ports: [{ port: 8080 }] }] } },
      { meta: meta('networking.k8s.io/v1', 'NetworkPolicy') }) as any;
    expect(out.spec.ingress).toEqual([{ ports: [{ port: 8080 }] }]);
  });

  it('Service ports merge by port; Namespace finalizers (atomic) are replaced', () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' },
      spec: { ports: [{ port: 80, name: 'a' }, { port: 81, name: 'b' }] } };
    const out = applyStrategicMergePatch(svc, { spec: { ports: [{ port: 81, name: 'c' }] } },
      { meta: meta('v1', 'Service') }) as any;
    expect(out.spec.ports).toEqual([{ port: 80, name: 'a' }, { port: 81, name: 'c' }]);
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x',
      finalizers: ['a'] }, spec: { finalizers: ['kubernetes'] } };
    const n2 = applyStrategicMergePatch(ns, { metadata: { finalizers: ['b'] },
      spec: { finalizers: ['other'] } }, { meta: meta('v1', 'Namespace') }) as any;
    expect(n2.metadata.finalizers).toEqual(['a', 'b']);
    expect(n2.spec.finalizers).toEqual(['other']);
  });

  it('EndpointSlice ports (atomic upstream) are replaced; fields unknown to the schema too', () => {
    const es = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'e' },
      addressType: 'IPv4', endpoints: [], ports: [{ port: 80, name: 'a' }],
      extra: [{ name: 'x', v: 1 }] };
    const out = applyStrategicMergePatch(es, { ports: [{ port: 81, name: 'b' }],
      extra: [{ name: 'x', w: 2 }] }, { meta: meta('discovery.k8s.io/v1', 'EndpointSlice') }) as any;
    expect(out.ports).toEqual([{ port: 81, name: 'b' }]);
    expect(out.extra).toEqual([{ name: 'x', w: 2 }]);
  });
});
