import { describe, expect, it } from 'vitest';
import {
  decodeKubernetesProtobuf, isProtobufContentType,
} from '../../../src/apiserver/protobuf/index.js';
import { isKdpError } from '../../../src/errors.js';
import { encode, envelope, mapEntries, objectMeta, type PbMessage } from './encoder.js';

function errorOf(f: () => unknown): unknown {
  try { f(); } catch (e) { return e; }
  return undefined;
}

const intOrString = (v: number | string): PbMessage =>
  typeof v === 'number' ? [[1, 0], [2, v], [3, '']] : [[1, 1], [2, 0], [3, v]];

describe('decodeKubernetesProtobuf', () => {
  it('decodes a Deployment with template, ports, resources, strategy and replicas 0', () => {
    const container: PbMessage = [[1, 'web'], [2, 'nginx:1.27'], [5, ''],
      [6, [[1, 'http'], [2, 0], [3, 80], [4, 'TCP'], [5, '']]],
      [8, [...mapEntries(1, {}), [1, [[1, 'cpu'], [2, [[1, '500m']]]]],
        [2, [[1, 'memory'], [2, [[1, '64Mi']]]]]]],
      [13, ''], [14, ''], [16, false], [17, false], [18, false], [20, '']];
    const body = envelope('apps/v1', 'Deployment', [
      [1, objectMeta('web', { app: 'web' })],
      [2, [
        [1, 0],
        [2, [...mapEntries(1, { app: 'web' })]],
        [3, [[1, objectMeta('', { app: 'web' })], [2, [[2, container], [3, ''], [6, ''],
          [11, false]]]]],
        [4, [[1, 'RollingUpdate'], [2, [[1, intOrString('25%')], [2, intOrString(1)]]]]],
        [5, 0], [7, false],
      ]],
      [3, [[1, 0], [2, 0]]],
    ]);
    expect(decodeKubernetesProtobuf(body)).toEqual({
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27',
            ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
            resources: { limits: { cpu: '500m' }, requests: { memory: '64Mi' } } }] },
        },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } },
      },
    });
  });

  it('decodes a Service: named targetPort, nodePort, type and clusterIP None', () => {
    const body = envelope('v1', 'Service', [
      [1, objectMeta('web')],
      [2, [[1, [[1, 'http'], [2, 'TCP'], [3, 80], [4, intOrString('http')], [5, 30080]]],
        [1, [[1, ''], [2, 'UDP'], [3, 53], [4, intOrString(5353)], [5, 0]]],
        ...mapEntries(2, { app: 'web' }), [3, 'None'], [4, 'NodePort'], [12, 0], [13, false],
        [18, 'None']]],
    ]);
    expect(decodeKubernetesProtobuf(body)).toEqual({
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
      spec: {
        ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http', nodePort: 30080 },
          { protocol: 'UDP', port: 53, targetPort: 5353 }],
        selector: { app: 'web' }, clusterIP: 'None', type: 'NodePort', clusterIPs: ['None'],
      },
    });
  });

  it('decodes ConfigMap data and binaryData (base64) and keeps empty map values', () => {
    const body = envelope('v1', 'ConfigMap', [[1, objectMeta('cm')],
      ...mapEntries(2, { a: '1', empty: '' }),
      ...mapEntries(3, { bin: new Uint8Array([0, 1, 255]) })]);
    expect(decodeKubernetesProtobuf(body)).toEqual({
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' },
      data: { a: '1', empty: '' }, binaryData: { bin: 'AAH/' },
    });
  });

  it('decodes Secret data as base64, stringData as text, and type', () => {
    const body = envelope('v1', 'Secret', [[1, objectMeta('s')],
      ...mapEntries(2, { user: 'admin' }), [3, 'Opaque'], ...mapEntries(4, { note: 'hi' })]);
    expect(decodeKubernetesProtobuf(body)).toEqual({
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' },
      data: { user: 'YWRtaW4=' }, type: 'Opaque', stringData: { note: 'hi' },
    });
  });

  it('decodes a Namespace with generateName, namespace and annotations in its metadata', () => {
    const body = envelope('v1', 'Namespace', [[1, [[1, ''], [2, 'team-'], [3, ''],
      ...mapEntries(12, { owner: 'me' })]], [2, [[1, 'kubernetes']]], [3, [[1, 'Active']]]]);
    expect(decodeKubernetesProtobuf(body)).toEqual({
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { generateName: 'team-', annotations: { owner: 'me' } },
      spec: { finalizers: ['kubernetes'] },
    });
  });

  it('decodes SelfSubjectAccessReview resource and non-resource attributes', () => {
    const ra = envelope('authorization.k8s.io/v1', 'SelfSubjectAccessReview', [
      [1, objectMeta('')],
      [2, [[1, [[1, 'default'], [2, 'get'], [3, ''], [4, ''], [5, 'pods'], [6, 'log'],
        [7, 'p']]]]],
      [3, [[1, false], [2, ''], [3, ''], [4, false]]],
    ]);
    expect(decodeKubernetesProtobuf(ra)).toEqual({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {},
      spec: { resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods',
        subresource: 'log', name: 'p' } },
    });
    const nra = envelope('authorization.k8s.io/v1', 'SelfSubjectAccessReview', [
      [2, [[2, [[1, '/healthz'], [2, 'get']]]]]]);
    expect(decodeKubernetesProtobuf(nra).spec).toEqual({
      nonResourceAttributes: { path: '/healthz', verb: 'get' } });
  });

  it('keeps the core API group "" inside RBAC rule lists', () => {
    const body = envelope('rbac.authorization.k8s.io/v1', 'Role', [[1, objectMeta('r')],
      [2, [[1, 'get'], [1, 'list'], [2, ''], [3, 'pods']]]]);
    expect(decodeKubernetesProtobuf(body).rules).toEqual([
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]);
  });

  it('skips unknown fields of every wire type', () => {
    const body = envelope('v1', 'Namespace', [
      [99, 7n], [98, { fixed64: 1n }], [97, { fixed32: 2 }], [96, 'junk'],
      [1, [[1, 'x'], [50, [[1, 'nested']]]]]]);
    expect(decodeKubernetesProtobuf(body)).toEqual({
      apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } });
  });

  it('rejects a kind it has no table for with KDP_UNSUPPORTED_MEDIA_TYPE', () => {
    const err = errorOf(() => decodeKubernetesProtobuf(envelope('apps/v1', 'StatefulSet', [])));
    expect(isKdpError(err, 'KDP_UNSUPPORTED_MEDIA_TYPE')).toBe(true);
    expect((err as Error).message).toContain('kdp cannot decode StatefulSet (apps/v1)');
    expect((err as Error).message).toContain('send it as application/json');
  });

  it('rejects a body without the k8s magic, or truncated, with KDP_BAD_REQUEST', () => {
    expect(isKdpError(errorOf(() => decodeKubernetesProtobuf(Buffer.from('{}'))),
      'KDP_BAD_REQUEST')).toBe(true);
    const good = envelope('v1', 'Namespace', [[1, objectMeta('x')]]);
    expect(isKdpError(errorOf(() => decodeKubernetesProtobuf(good.subarray(0, good.length - 3))),
      'KDP_BAD_REQUEST')).toBe(true);
  });

  it('rejects a field with the wrong wire type with KDP_BAD_REQUEST', () => {
    const body = envelope('v1', 'Namespace', [[1, [[1, 5]]]]);
    expect(isKdpError(errorOf(() => decodeKubernetesProtobuf(body)), 'KDP_BAD_REQUEST'))
      .toBe(true);
  });

  it('decodes negative int32 varints (10-byte sign extension)', () => {
    const body = envelope('v1', 'Pod', [[1, objectMeta('p')],
      [2, [[4, -1], [22, [[1, 'k'], [5, 300]]]]]]);
    expect(decodeKubernetesProtobuf(body).spec).toEqual({
      terminationGracePeriodSeconds: -1, tolerations: [{ key: 'k', tolerationSeconds: 300 }] });
  });
});

describe('captured typed-client bodies', () => {
  it('decodes the DeleteOptions body of `kubectl drain --disable-eviction --grace-period=7`',
    () => {
      const body = Buffer.from('azhzAAoTCgJ2MRINRGVsZXRlT3B0aW9ucxICCAcaACIA', 'base64');
      expect(decodeKubernetesProtobuf(body)).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions',
        gracePeriodSeconds: 7 });
    });

  it('decodes the Job of `kubectl create job j --image=busybox -- echo hi`', () => {
    const body = Buffer.from('azhzAAoPCghiYXRjaC92MRIDSm9iEoIBChEKAWoSABoAIgAqADIAOABCABJjMmE' +
      'KEAoAEgAaACIAKgAyADgAQgASTRIqCgFqEgdidXN5Ym94GgRlY2hvGgJoaSoAQgBqAHIAgAEAiAEAkAEAogEAGg' +
      'VOZXZlcjIAQgBKAFIAWABgAGgAggEAigEAmgEAwgEAGgggACgAMAA6ABoAIgA=', 'base64');
    expect(decodeKubernetesProtobuf(body)).toEqual({ apiVersion: 'batch/v1', kind: 'Job',
      metadata: { name: 'j' }, spec: { template: { spec: { restartPolicy: 'Never',
        containers: [{ name: 'j', image: 'busybox', command: ['echo', 'hi'] }] } } } });
  });
});

describe('CronJob (kubectl create cronjob, 1.32+)', () => {
  it('decodes schedule, jobTemplate, suspend 0 and history limits', () => {
    const body = envelope('batch/v1', 'CronJob', [
      [1, objectMeta('hello')],
      [2, [[1, '*/1 * * * *'], [3, 'Forbid'], [4, false],
        [5, [[1, objectMeta('hello')], [2, [[6, [[1, objectMeta('')], [2, [
          [2, [[1, 'hello'], [2, 'busybox'], [3, 'echo']]], [3, 'OnFailure']]]]]]]]],
        [6, 0], [8, 'Europe/Berlin']]],
    ]);
    expect(decodeKubernetesProtobuf(body)).toEqual({ apiVersion: 'batch/v1', kind: 'CronJob',
      metadata: { name: 'hello' }, spec: { schedule: '*/1 * * * *', concurrencyPolicy: 'Forbid',
        suspend: false, successfulJobsHistoryLimit: 0, timeZone: 'Europe/Berlin',
        jobTemplate: { metadata: { name: 'hello' }, spec: { template: { spec: {
          restartPolicy: 'OnFailure', containers: [{ name: 'hello', image: 'busybox', command: ['echo'] }] } } } } } });
  });
});

describe('isProtobufContentType', () => {
  it('matches the media type with or without parameters', () => {
    expect(isProtobufContentType('application/vnd.kubernetes.protobuf')).toBe(true);
    expect(isProtobufContentType('application/vnd.kubernetes.protobuf; charset=x')).toBe(true);
    expect(isProtobufContentType('application/json')).toBe(false);
    expect(isProtobufContentType(undefined)).toBe(false);
  });
});

describe('encoder helper', () => {
  it('encodes field 1 varint 150 as upstream docs show (08 96 01)', () => {
    expect(encode([[1, 150]]).toString('hex')).toBe('089601');
  });
});
