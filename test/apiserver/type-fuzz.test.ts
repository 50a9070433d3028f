// Random bodies of every served kind (from the type tables, some values of the wrong type) sent
// by create, merge patch and strategic merge patch never answer 5xx, and whatever is stored
// decodes as its type: no JavaScript error escapes and nothing of the wrong type is kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_RESOURCES, apiVersionOf } from '../../src/api/registry.js';
import { findTypeProblem } from '../../src/api/schema/index.js';
import { generator } from '../helpers/random-objects.js';
import { buildTestServer } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const N = Number(process.env.KDP_FUZZ_N ?? 25);

function collection(r: (typeof BUILTIN_RESOURCES)[number]): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced ? `${base}/namespaces/default/${r.resource}` : `${base}/${r.resource}`;
}

describe('random bodies never answer 5xx nor store a value of the wrong type', () => {
  let s: TestServer;
  beforeAll(async () => { s = await buildTestServer(); });
  afterAll(async () => { await s.done(); });

  for (const r of BUILTIN_RESOURCES) {
    it(`${r.kind}`, async () => {
      const gen = generator(r.kind.length * 104729);
      const url = collection(r);
      const apiVersion = apiVersionOf(r);
      const seen: string[] = [];
      const check = async (what: string, res: { status: number; text: string }) => {
        seen.push(`${what} → ${res.status}`);
        expect(res.status, `${what}\n${res.text.slice(0, 400)}`).toBeLessThan(500);
      };
      for (let i = 0; i < N; i++) {
        const name = `fz-${i}`;
        const body = { ...(gen(r.kind, 0, 0.05) as object), apiVersion, kind: r.kind,
          metadata: { name } };
        const text = JSON.stringify(body);
        await check(`create ${text}`, await s.req('POST', url, text));
        for (const type of ['merge', 'strategic-merge']) {
          const patch = { ...(gen(r.kind, 0, 0.05) as Record<string, unknown>) };
          delete patch.metadata; delete patch.kind; delete patch.apiVersion;
          const ptext = JSON.stringify(patch);
          await check(`${type} patch ${ptext}`, await s.req('PATCH', `${url}/${name}`, ptext,
            { 'content-type': `application/${type}-patch+json` }));
        }
      }
      const list = await s.req('GET', url);
      for (const o of list.body.items ?? []) {
        expect(findTypeProblem(apiVersion, r.kind, o), JSON.stringify(o)).toBeUndefined();
      }
    });
  }
});
