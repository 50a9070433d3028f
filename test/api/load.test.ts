import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { loadObjectsFromFiles, loadObjectsFromText } from '../../src/api/load.js';

const MULTI = `# leading comment
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80}]
---
---
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: d}
- apiVersion: v1
  kind: PodList
  items:
  - {apiVersion: v1, kind: Pod, metadata: {name: p}}
`;

function inputError(f: () => unknown): string {
  try { f(); } catch (e) {
    expect(isKdpError(e, 'KDP_INPUT')).toBe(true);
    return (e as Error).message;
  }
  throw new Error('expected KDP_INPUT');
}

describe('manifest loading', () => {
  it('reads multi-document YAML, skips empty documents and flattens Lists', () => {
    const objs = loadObjectsFromText(MULTI, 'a.yaml');
    expect(objs.map((o) => `${o.object.kind}/${o.object.metadata.name}`))
      .toEqual(['Service/web', 'Deployment/d', 'Pod/p']);
    expect(objs.map((o) => o.source)).toEqual([
      { file: 'a.yaml', document: 1 },
      { file: 'a.yaml', document: 3, item: 0 },
      { file: 'a.yaml', document: 3, item: 1 },
    ]);
  });
  it('reads JSON and fills in missing metadata', () => {
    const [o] = loadObjectsFromText('{"apiVersion":"v1","kind":"Namespace"}', 'x.json');
    expect(o!.object.metadata).toEqual({});
  });
  it('reads yes/no as YAML 1.1 booleans like kubectl', () => {
    const [o] = loadObjectsFromText('apiVersion: v1\nkind: ConfigMap\ndata: {a: yes}\n', 'c.yaml');
    expect((o!.object.data as Record<string, unknown>).a).toBe(true);
  });
  it('names file, document and field for missing apiVersion or kind', () => {
    expect(inputError(() => loadObjectsFromText('kind: Pod\n---\n', 'f.yaml')))
      .toBe("f.yaml: document 1: apiVersion: Required value: 'apiVersion' must be set");
    expect(inputError(() => loadObjectsFromText('a: 1\n---\napiVersion: v1\n', 'f.yaml')))
      .toContain('f.yaml: document 1: apiVersion');
    expect(inputError(() => loadObjectsFromText('apiVersion: v1\nkind: Pod\n---\napiVersion: v1\n',
      'f.yaml'))).toContain('f.yaml: document 2: kind: Required value');
  });
  it('rejects unknown kinds and wrong versions', () => {
    expect(inputError(() => loadObjectsFromText('apiVersion: v1\nkind: Deployment\n', 'f.yaml')))
      .toBe('f.yaml: document 1: kind: no matches for kind "Deployment" in version "v1"');
    const ok = loadObjectsFromText('apiVersion: x/v1\nkind: Widget\n', 'f',
      { allowUnknownKinds: true });
    expect(ok).toHaveLength(1);
  });
  it('reports malformed YAML with its document and line', () => {
    const msg = inputError(() => loadObjectsFromText('apiVersion: v1\nkind: Pod\n---\na: [\n',
      'g.yaml'));
    expect(msg).toMatch(/^g\.yaml: document 2: invalid YAML at line \d+, column \d+/);
    expect(inputError(() => loadObjectsFromText('- a\n- b\n',
      'h.yaml'))).toContain('not an object');
    expect(inputError(() => loadObjectsFromText('a: 1\na: 2\n',
      'd.yaml'))).toContain('invalid YAML');
  });
  it('names the List item that is wrong', () => {
    const text = 'apiVersion: v1\nkind: List\nitems:\n'
      + '- {apiVersion: v1, kind: Pod}\n- {kind: Pod}\n';
    expect(inputError(() => loadObjectsFromText(text, 'l.yaml')))
      .toContain('l.yaml: document 1: item 1: apiVersion');
  });
});

describe('manifest files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-load-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('reads a directory of manifests in name order and fails on missing files', async () => {
    writeFileSync(join(dir, 'b.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n');
    writeFileSync(join(dir, 'a.json'),
      '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}');
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    const objs = await loadObjectsFromFiles([dir]);
    expect(objs.map((o) => o.object.metadata.name)).toEqual(['a', 'b']);
    await expect(loadObjectsFromFiles([join(dir, 'nope.yaml')])).rejects.toMatchObject(
      { code: 'KDP_INPUT' });
  });
});
