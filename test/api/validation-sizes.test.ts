// Size limits count bytes as upstream does: decoded bytes of base64 values, UTF-8 bytes of text.
import { describe, expect, it } from 'vitest';
import { validate } from '../../src/api/validation/index.js';
import type { KubeObject } from '../../src/client/types.js';

const MiB = 1024 * 1024;
const secret = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Secret',
  metadata: { name: 's', namespace: 'default' }, data }) as KubeObject;
const configMap = (more: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'default' }, ...more }) as KubeObject;
const b64 = (n: number) => Buffer.alloc(n).toString('base64');

describe('data size limits', () => {
  it('a Secret holding more than 1 MiB is Too long on data', () => {
    expect(validate(secret({ a: b64(MiB / 2), b: b64(MiB / 2 + 1) }))).toEqual([
      { field: 'data', reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 1048576 bytes' }]);
  });

  it('a Secret holding exactly 1 MiB is valid', () => {
    expect(validate(secret({ a: b64(MiB / 2), b: b64(MiB / 2) }))).toEqual([]);
  });

  it('ConfigMap text counts UTF-8 bytes, binaryData its decoded bytes', () => {
    const text = 'é'.repeat(MiB / 2 + 1);
    expect(validate(configMap({ data: { t: text } })).map((c) => c.reason))
      .toEqual(['FieldValueTooLong']);
    expect(validate(configMap({ binaryData: { b: b64(MiB) } }))).toEqual([]);
    expect(validate(configMap({ binaryData: { b: b64(MiB + 1) } })).map((c) => c.reason))
      .toEqual(['FieldValueTooLong']);
  });
});
