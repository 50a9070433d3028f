import { describe, expect, it } from 'vitest';
import { applyJsonPatch } from '../../src/apiserver/patch/json-patch.js';
import { applyMergePatch } from '../../src/apiserver/patch/merge-patch.js';
import { applyStrategicMergePatch } from '../../src/apiserver/patch/strategic.js';

const podSpec = () => ({
  spec: {
    containers: [
      { name: 'a', image: 'nginx:1.27', ports: [{ containerPort: 80 }, { containerPort: 81 }],
        env: [{ name: 'X', value: '1' }] },
      { name: 'b', image: 'busybox' },
    ],
    finalizers: ['x'],
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%' } },
  },
});

describe('JSON patch (RFC 6902)', () => {
  it('applies add, remove, replace, move, copy and test with escaped paths', () => {
    const doc = { metadata: { labels: { 'a/b': '1', 'c~d': '2' } }, list: [1, 2] };
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/list/-', value: 3 },
      { op: 'remove', path: '/metadata/labels/a~1b' },
      { op: 'replace', path: '/metadata/labels/c~0d', value: '3' },
      { op: 'copy', from: '/list/0', path: '/first' },
      { op: 'move', from: '/first', path: '/moved' },
      { op: 'test', path: '/moved', value: 1 },
    ]);
    expect(out).toEqual({ metadata: { labels: { 'c~d': '3' } }, list: [1, 2, 3], moved: 1 });
    expect(doc.list).toEqual([1, 2]);
  });
  it('rejects a path that does not exist', () => {
    expect(() => applyJsonPatch({}, [{ op: 'remove', path: '/nope' }]))
      .toThrow(expect.objectContaining({ code: 'KDP_INVALID', details: { causes: [
        expect.objectContaining({ message: expect.stringMatching(/missing path/) })] } }));
  });
  it('a failed test rejects the whole patch', () => {
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }])).toThrow();
  });
});

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects, deletes on null and replaces arrays', () => {
    expect(applyMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [9] }))
      .toEqual({ a: { c: 2, d: 3 }, l: [9] });
  });
});

describe('strategic merge patch', () => {
  it('merges containers by name and keeps fields the patch does not mention', () => {
    const out = applyStrategicMergePatch(podSpec(),
      { spec: { containers: [{ name: 'a', image: 'nginx:1.28' }] } }) as any;
    expect(out.spec.containers).toHaveLength(2);
    expect(out.spec.containers[0]).toEqual({ name: 'a', image: 'nginx:1.28',
      ports: [{ containerPort: 80 }, { containerPort: 81 }], env: [{ name: 'X', value: '1' }] });
  });
  it('honours $patch: delete on list elements and null on fields', () => {
    const out = applyStrategicMergePatch(podSpec(), { spec: { containers: [
      { name: 'a', env: null, ports: [{ $patch: 'delete', containerPort: 81 }] },
      { $patch: 'delete', name: 'b' }] } }) as any;
    expect(out.spec.containers).toEqual([{ name: 'a', image: 'nginx:1.27',
      ports: [{ containerPort: 80 }] }]);
  });
  it('honours $patch: replace on a list and on a map', () => {
    const out = applyStrategicMergePatch(podSpec(), { spec: {
      containers: [{ name: 'z', image: 'z' }, { $patch: 'replace' }],
      strategy: { $patch: 'replace', type: 'Recreate' } } }) as any;
    expect(out.spec.containers).toEqual([{ name: 'z', image: 'z' }]);
    expect(out.spec.strategy).toEqual({ type: 'Recreate' });
  });
  it('honours $retainKeys, $setElementOrder and $deleteFromPrimitiveList', () => {
    const out = applyStrategicMergePatch(podSpec(), { spec: {
      strategy: { $retainKeys: ['type'], type: 'Recreate' },
      '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
      '$deleteFromPrimitiveList/finalizers': ['x'],
    } }) as any;
    expect(out.spec.strategy).toEqual({ type: 'Recreate' });
    expect(out.spec.containers.map((c: any) => c.name)).toEqual(['b', 'a']);
    expect(out.spec.finalizers).toEqual([]);
  });
  it('merges service ports by port and conditions by type', () => {
    const svc = { spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] },
      status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'X', status: 'True' }] } };
    const out = applyStrategicMergePatch(svc, { spec: { ports: [{ port: 80, name: 'http' }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }] } }) as any;
    expect(out.spec.ports).toEqual([{ port: 80, targetPort: 8080, name: 'http' }, { port: 443 }]);
    expect(out.status.conditions).toEqual([{ type: 'Ready', status: 'True' },
      { type: 'X', status: 'True' }]);
  });
  it('replaces lists without a merge key and unions primitive set-lists', () => {
    const orig = { a: { args: ['x', 'y'] }, metadata: { finalizers: ['f1'] } };
    const out = applyStrategicMergePatch(orig,
      { a: { args: ['z'] }, metadata: { finalizers: ['f2', 'f1'] } }) as any;
    expect(out.a.args).toEqual(['z']);
    expect(out.metadata.finalizers).toEqual(['f1', 'f2']);
  });
});
