import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { assertValid, validate } from '../../src/api/validation/index.js';
import { isQualifiedName } from '../../src/api/validation/names.js';
import type { ConfigMap } from '../../src/api/types.js';

const cm = (metadata: ConfigMap['metadata']): ConfigMap =>
  applyDefaults({ apiVersion: 'v1', kind: 'ConfigMap', metadata });

describe('object metadata validation', () => {
  it('words an invalid name exactly as upstream', () => {
    expect(validate(cm({ name: 'Foo', namespace: 'default' }))).toEqual([{
      field: 'metadata.name', reason: 'FieldValueInvalid',
      message: 'Invalid value: "Foo": a lowercase RFC 1123 subdomain must consist of lower case '
        + "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        + "character (e.g. 'example.com', regex used for validation is "
        + "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    }]);
  });
  it('requires a name or generateName and a namespace for namespaced kinds', () => {
    expect(validate(cm({}))).toEqual([
      { field: 'metadata.name', reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required' },
      { field: 'metadata.namespace', reason: 'FieldValueRequired', message: 'Required value' },
    ]);
    expect(validate(cm({ generateName: 'web-', namespace: 'default' }))).toEqual([]);
  });
  it('forbids a namespace on cluster-scoped kinds', () => {
    const causes = validate({ apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: 'x', namespace: 'y' } });
    expect(causes).toEqual([{ field: 'metadata.namespace', reason: 'FieldValueForbidden',
      message: 'Forbidden: not allowed on this type' }]);
  });
  it('reports every bad label key and value and annotation key', () => {
    const causes = validate(cm({ name: 'x', namespace: 'default',
      labels: { 'a/b/c': 'ok', good: 'bad value!', ['x'.repeat(64)]: 'v' },
      annotations: { '-bad': 'anything goes here' } }));
    expect(causes.map((c) => c.field)).toEqual(['metadata.labels', 'metadata.labels',
      'metadata.labels', 'metadata.annotations']);
    expect(causes[0]!.message).toContain('Invalid value: "a/b/c": a qualified name must consist');
    expect(causes[1]!.message).toContain('Invalid value: "bad value!": a valid label must be');
    expect(causes[2]!.message).toContain('name part must be no more than 63 characters');
  });
  it('accepts plain and prefixed qualified names and words each fault of a bad one', () => {
    for (const ok of ['app', 'pod-template-hash', 'Ab_c.1', 'x'.repeat(63), 'example.com/app']) {
      expect(isQualifiedName(ok)).toEqual([]);
    }
    expect(isQualifiedName('x'.repeat(64)))
      .toEqual(['name part must be no more than 63 characters']);
    expect(isQualifiedName('/app')).toEqual(['prefix part must be non-empty']);
    expect(isQualifiedName('app/')).toEqual(['name part must be non-empty',
      expect.stringContaining('name part must consist of alphanumeric characters')]);
    expect(isQualifiedName('-bad')).toEqual([
      expect.stringContaining('name part must consist of alphanumeric characters')]);
  });
  it('checks owner references and finalizers', () => {
    const causes = validate(cm({ name: 'x', namespace: 'default',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: '', uid: '' }],
      finalizers: ['nope', 'example.com/ok'] }));
    expect(causes.map((c) => c.field)).toEqual(['metadata.ownerReferences[0].name',
      'metadata.ownerReferences[0].uid', 'metadata.finalizers[0]']);
  });
  it('throws KDP_INVALID with the upstream Status message from assertValid', () => {
    expect(() => assertValid({ apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'A', namespace: 'default' } })).toThrow(expect.objectContaining({
      code: 'KDP_INVALID',
      message: expect.stringMatching(/^Deployment\.apps "A" is invalid: \[metadata\.name: /),
    }));
  });
});
