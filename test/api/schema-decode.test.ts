// The type decoder answers what Go's encoding/json answers for the typed struct: the first
// mismatch in document order, Go's wording, and the field path; nulls decode to zero values.
import { describe, expect, it } from 'vitest';
import { base64ErrorOffset } from '../../src/api/schema/base64.js';
import { decodeTypes, findTypeProblem } from '../../src/api/schema/index.js';

describe('base64 (Go StdEncoding) acceptance', () => {
  const cases: Array<[string, number]> = [
    ['', -1], ['YQ==', -1], ['YWI=', -1], ['YWJj', -1], ['YQ\n==', -1], ['YW\r\nJj', -1],
    ['abc', 0], ['YQ', 0], ['YQ=', 3], ['Y===', 1], ['YQ=x', 2], ['YQ==YQ==', 4],
    ['not base64!!', 3], ['aGVsbG8=!', 8], ['é', 0], ['YWJj-', 4],
  ];
  for (const [s, at] of cases) {
    it(`${JSON.stringify(s)} → ${at}`, () => expect(base64ErrorOffset(s)).toBe(at));
  }
});

describe('decodeTypes', () => {
  it('reports the first mismatch in document order', () => {
    const p = decodeTypes('v1', 'Service', { spec: { ports: [{ port: 80 }, { port: 'x' }],
      selector: 5 } });
    expect(p).toEqual({ field: 'spec.ports[1].port', message: 'json: cannot unmarshal ' +
      'string into Go struct field ServicePort.spec.ports.port of type int32' });
  });

  it('names the innermost struct and the Go type of lists, maps and structs', () => {
    expect(decodeTypes('v1', 'Pod', { spec: 'x' })?.message).toBe('json: cannot unmarshal ' +
      'string into Go struct field Pod.spec of type v1.PodSpec');
    expect(decodeTypes('v1', 'Pod', { spec: { containers: ['c'] } })?.message).toBe(
      'json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type ' +
      'v1.Container');
    expect(decodeTypes('v1', 'Node', { status: { capacity: [] } })?.message).toBe(
      'json: cannot unmarshal array into Go struct field NodeStatus.status.capacity of type ' +
      'v1.ResourceList');
    expect(decodeTypes('discovery.k8s.io/v1', 'EndpointSlice', { ports: [{ port: true }] }))
      .toEqual({ field: 'ports[0].port', message: 'json: cannot unmarshal bool into Go struct ' +
        'field EndpointPort.ports.port of type int32' });
    expect(decodeTypes('v1', 'ConfigMap', [])?.message).toBe('json: cannot unmarshal array ' +
      'into Go value of type v1.ConfigMap');
  });

  it('int64 takes integers beyond int32; floats and out-of-range values are refused', () => {
    expect(decodeTypes('v1', 'Pod', { spec: { activeDeadlineSeconds: 2 ** 40 } })).toBeUndefined();
    expect(decodeTypes('v1', 'Pod', { spec: { activeDeadlineSeconds: 0.5 } })?.message)
      .toContain('cannot unmarshal number 0.5 into Go struct field PodSpec.spec.' +
        'activeDeadlineSeconds of type int64');
    expect(decodeTypes('v1', 'Pod', { spec: { activeDeadlineSeconds: 2 ** 64 } })?.field)
      .toBe('spec.activeDeadlineSeconds');
  });

  it('quantities take strings in the grammar and numbers; IntOrString strings or int32', () => {
    const pod = (res: unknown, port: unknown) => ({ spec: { containers: [{ name: 'c',
      resources: { limits: res }, readinessProbe: { httpGet: { port } } }] } });
    expect(decodeTypes('v1', 'Pod', pod({ cpu: '100m', memory: 1 }, 'http'))).toBeUndefined();
    expect(decodeTypes('v1', 'Pod', pod({ cpu: true }, 80))).toEqual({
      field: 'spec.containers[0].resources.limits[cpu]',
      message: 'quantities must match the regular expression ' +
        '\'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'' });
    expect(decodeTypes('v1', 'Pod', pod({}, { a: 1 }))?.message).toBe('json: cannot unmarshal ' +
      'object into Go struct field HTTPGetAction.spec.containers.readinessProbe.httpGet.port ' +
      'of type int32');
  });

  it('decodes nulls: struct fields dropped (a Time kept), list and map entries zeroed', () => {
    const o = { metadata: { name: null, labels: { a: null } }, spec: { containers: [null],
      nodeSelector: null }, status: { conditions: [{ type: 'Ready', lastProbeTime: null }] } };
    expect(decodeTypes('v1', 'Pod', o)).toBeUndefined();
    expect(o).toEqual({ metadata: { labels: { a: '' } }, spec: { containers: [{}] },
      status: { conditions: [{ type: 'Ready', lastProbeTime: null }] } });
  });

  it('keeps unknown fields below the top level; findTypeProblem changes nothing', () => {
    const o = { spec: { containers: [], futureField: { x: 1 } }, metadata: { labels: null } };
    expect(findTypeProblem('v1', 'Pod', o)).toBeUndefined();
    expect(o.metadata.labels).toBeNull();
    expect(decodeTypes('v1', 'Pod', o)).toBeUndefined();
    expect(o).toEqual({ spec: { containers: [], futureField: { x: 1 } }, metadata: {} });
  });

  it('passes kinds it has no table for', () => {
    expect(decodeTypes('example.com/v1', 'Widget', { spec: 5 })).toBeUndefined();
  });
});
