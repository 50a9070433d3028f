import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type { KubeObject } from '../../src/client/types.js';

const fields = (o: KubeObject): string[] =>
  validate(applyDefaults(o)).map((c) => `${c.field} ${c.reason}`);

describe('validation of other kinds', () => {
  it('requires namespace names to be DNS labels', () => {
    expect(fields({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } }))
      .toEqual(['metadata.name FieldValueInvalid']);
    expect(fields({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ok' },
      spec: { finalizers: ['kubernetes'] } })).toEqual([]);
  });
  it('checks node pod CIDRs and taints', () => {
    expect(fields({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' },
      spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', '10.244.2.0/24', 'x'],
        taints: [{ key: 'k', effect: 'Never' }] } })).toEqual([
      'spec.podCIDRs[2] FieldValueInvalid',
      'spec.podCIDRs FieldValueInvalid',
      'spec.taints[0].effect FieldValueNotSupported',
    ]);
  });
  it('checks ConfigMap keys', () => {
    expect(fields({ apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'default' }, data: { 'a b': '1', '..x': '2', ok: '3' } }))
      .toEqual(['data[a b] FieldValueInvalid', 'data[..x] FieldValueInvalid']);
  });
  it('requires events to share their involved object namespace', () => {
    expect(fields({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e.1', namespace: 'a' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'b' } }))
      .toEqual(['involvedObject.namespace FieldValueInvalid']);
  });
  it('checks RBAC rules, role refs and subjects', () => {
    expect(fields({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role',
      metadata: { name: 'r', namespace: 'default' },
      rules: [{ verbs: [] }, { verbs: ['get'], nonResourceURLs: ['/healthz'] }] })).toEqual([
      'rules[0].verbs FieldValueRequired', 'rules[0].apiGroups FieldValueRequired',
      'rules[0].resources FieldValueRequired', 'rules[1].nonResourceURLs FieldValueInvalid',
    ]);
    expect(fields({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding',
      metadata: { name: 'b' }, roleRef: { kind: 'Role', name: 'r' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa' }, { kind: 'Robot', name: 'x' }] }))
      .toEqual(['roleRef.kind FieldValueNotSupported', 'subjects[0].namespace FieldValueRequired',
        'subjects[1].kind FieldValueNotSupported']);
  });
  it('passes unknown kinds through', () => {
    expect(validate({ apiVersion: 'x/v1', kind: 'Widget', metadata: {} })).toEqual([]);
  });
});
