import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DEPTH } from '../../src/apiserver/http/depth.js';
import { buildAdmittedServer, type AdmittedServer } from './helpers/admitted-server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const T = {
  merge: { 'content-type': 'application/merge-patch+json' },
  json: { 'content-type': 'application/json-patch+json' },
  smp: { 'content-type': 'application/strategic-merge-patch+json' },
  apply: { 'content-type': 'application/apply-patch+yaml' },
  yaml: { 'content-type': 'application/yaml' },
};

/** JSON text of a value nested `levels` deep (objects or arrays). */
function nested(levels: number, kind: 'obj' | 'arr'): string {
  return kind === 'arr' ? '['.repeat(levels) + ']'.repeat(levels) :
    '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
}

/** Request bodies whose whole document nests `depth` levels (the object itself is level 1). */
function bodies(depth: number, kind: 'obj' | 'arr', name: string) {
  const x = nested(depth - 1, kind);
  const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"x":${x}}`;
  return {
    create: ['POST', CMS, cm, {}] as const,
    put: ['PUT', `${CMS}/c`, cm.replace(`"${name}"`, '"c"'), {}] as const,
    merge: ['PATCH', `${CMS}/c`, `{"x":${x}}`, T.merge] as const,
    smp: ['PATCH', `${CMS}/c`, `{"x":${x}}`, T.smp] as const,
    // The op array is level 1, the op level 2: the value sits at depth - 2 inside.
    json: ['PATCH', `${CMS}/c`,
      `[{"op":"add","path":"/x","value":${nested(depth - 2, kind)}}]`, T.json] as const,
    apply: ['PATCH', `${CMS}/c?fieldManager=t`, cm.replace(`"${name}"`, '"c"'), T.apply] as const,
    yamlBlock: ['POST', CMS, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}y\nx:\n` +
      Array.from({ length: depth - 2 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n') +
      ' {}\n', T.yaml] as const,
  };
}

describe(`request bodies nest at most ${MAX_DEPTH} levels, on every decode path`, () => {
  let s: AdmittedServer;
  beforeAll(async () => {
    s = await buildAdmittedServer();
    await s.req('POST', CMS, { metadata: { name: 'c' }, data: { a: '1' } });
  });
  afterAll(async () => { await s.done(); });

  for (const via of ['req', 'inject'] as const) {
    for (const kind of ['obj', 'arr'] as const) {
      it(`${via}: ${kind} bodies at the bound are accepted`, async () => {
        const b = bodies(MAX_DEPTH, kind, `ok-${via}-${kind}`);
        for (const [what, [method, url, body, headers]] of Object.entries(b)) {
          if (what === 'yamlBlock' && kind === 'arr') continue;
          const r = await s[via](method, url, body, headers);
          expect([what, r.status, r.body?.message]).toEqual([what, r.status < 300 ?
            r.status : 'success', undefined]);
        }
      });

      it(`${via}: ${kind} bodies one level deeper are 400 exceeded max depth`, async () => {
        const b = bodies(MAX_DEPTH + 1, kind, `deep-${via}-${kind}`);
        for (const [what, [method, url, body, headers]] of Object.entries(b)) {
          const before = s.rev();
          const r = await s[via](method, url, body, headers);
          expect([what, r.status, r.body?.reason]).toEqual([what, 400, 'BadRequest']);
          expect(r.body.message).toMatch(/exceeded max depth|Invalid JSON Patch/);
          expect(s.rev()).toBe(before);
        }
      });
    }

    it(`${via}: 10,000 levels answer 400, never 500`, async () => {
      const b = bodies(10_000, 'arr', `huge-${via}`);
      for (const [what, [method, url, body, headers]] of Object.entries(b)) {
        if (what === 'yamlBlock') continue; // 50 MB of indentation: 413 before decoding
        const r = await s[via](method, url, body, headers);
        expect([what, r.status]).toEqual([what, 400]);
      }
      const flow = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nx: ${
        '{a: '.repeat(10_000)}1${'}'.repeat(10_000)}\n`;
      const r = await s[via]('PATCH', `${CMS}/c?fieldManager=t`, flow, T.apply);
      expect(r.status).toBe(400);
    });
  }

  it('a JSON patch cannot stack a value below a deep path past the bound', async () => {
    const half = Math.floor(MAX_DEPTH / 2) + 2;
    await s.req('PATCH', `${CMS}/c`, `{"y":${nested(half, 'obj')}}`, T.merge);
    const path = `/y${'/a'.repeat(half - 2)}/b`;
    const r = await s.req('PATCH', `${CMS}/c`,
      `[{"op":"add","path":"${path}","value":${nested(half, 'obj')}}]`, T.json);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('exceeded max depth');
  });
});
