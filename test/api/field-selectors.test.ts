import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { fieldValue, parseFieldSelector } from '../../src/api/field-selectors.js';
import type { Event, Pod } from '../../src/api/types.js';

const pod: Pod = {
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'default' },
  spec: { containers: [], nodeName: 'n1', hostNetwork: true }, status: { phase: 'Running' },
};

describe('field selectors', () => {
  it('match pods on node name, phase and metadata', () => {
    expect(parseFieldSelector('spec.nodeName=n1,status.phase!=Failed', 'pods').matches(pod))
      .toBe(true);
    expect(parseFieldSelector('metadata.name==p2', 'pods').matches(pod)).toBe(false);
    expect(parseFieldSelector('spec.hostNetwork=true', 'pods').matches(pod)).toBe(true);
  });
  it('match unscheduled pods with an empty value', () => {
    const unscheduled: Pod = { metadata: { name: 'x' }, spec: { containers: [] } };
    const m = parseFieldSelector('spec.nodeName=', 'pods');
    expect(m.matches(unscheduled)).toBe(true);
    expect(m.matches(pod)).toBe(false);
    expect(parseFieldSelector('spec.nodeName!=', 'pods').matches(pod)).toBe(true);
  });
  it('select events by involved object and source', () => {
    const ev: Event = { metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p1' },
      source: { component: 'kubelet' }, type: 'Warning' };
    expect(parseFieldSelector('involvedObject.kind=Pod,involvedObject.name=p1,source=kubelet',
      'events').matches(ev)).toBe(true);
    expect(fieldValue(ev, 'reason')).toBe('');
  });
  it('unescape values and expose exact values for indexing', () => {
    const m = parseFieldSelector('metadata.name=a\\,b', 'configmaps');
    expect(m.exactValue('metadata.name')).toBe('a,b');
    expect(m.toString()).toBe('metadata.name=a\\,b');
    expect(parseFieldSelector('', 'pods').empty).toBe(true);
  });
  it('reject unsupported fields and malformed terms with KDP_BAD_REQUEST', () => {
    for (const [s, r, msg] of [['spec.nodeName=x', 'services', 'field label not supported'],
      ['status.phase=Running', 'configmaps', 'field label not supported: status.phase'],
      ['metadata.name', 'pods', "can't understand"],
      ['metadata.name=a=b', 'pods', 'unescaped ='],
      ['metadata.name=a\\x', 'pods', 'invalid escape']] as const) {
      let err: unknown;
      try { parseFieldSelector(s, r); } catch (e) { err = e; }
      expect(isKdpError(err, 'KDP_BAD_REQUEST'), s).toBe(true);
      expect((err as Error).message, s).toContain(msg);
    }
  });
});
