// Validation and defaulting never throw, whatever the shape: random objects of every served
// kind, built from the kind's type table (well-typed, with nulls, unknown fields and, now and
// then, a value of the wrong type), go through decode → defaults → validate (create, update).
import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { BUILTIN_RESOURCES, apiVersionOf } from '../../src/api/registry.js';
import { decodeTypes, hasTypeSchema } from '../../src/api/schema/index.js';
import { validate } from '../../src/api/validation/index.js';
import type { KubeObject } from '../../src/client/types.js';
import { generator } from '../helpers/random-objects.js';

/** KDP_FUZZ_N / KDP_FUZZ_SEED widen a local run; CI runs the fixed default. */
const N = Number(process.env.KDP_FUZZ_N ?? 300);
const SEED = Number(process.env.KDP_FUZZ_SEED ?? 0);

const KINDS = BUILTIN_RESOURCES.map((x) => ({ apiVersion: apiVersionOf(x), kind: x.kind }));

function make(gen: ReturnType<typeof generator>, apiVersion: string, kind: string,
  wrong: number): KubeObject {
  const o = gen(kind, 0, wrong) as KubeObject;
  if (!o || typeof o !== 'object' || Array.isArray(o)) return { apiVersion, kind, metadata: {} };
  return { ...o, apiVersion, kind, metadata: (o.metadata ?? { name: 'x' }) as never };
}

describe('validation never throws on any shape', () => {
  it('every served kind has a type table', () => {
    for (const k of KINDS) expect(hasTypeSchema(k.apiVersion, k.kind), k.kind).toBe(true);
  });

  for (const { apiVersion, kind } of KINDS) {
    it(`${kind}: decode, defaults and validation of random objects do not throw`, () => {
      const gen = generator(kind.length * 7919 + SEED);
      for (let i = 0; i < N; i++) {
        const wrong = i % 3 === 0 ? 0.02 : 0;
        const obj = make(gen, apiVersion, kind, wrong);
        const old = make(gen, apiVersion, kind, 0);
        const seen = JSON.stringify(obj);
        try {
          // Raw (undecoded) input: validate answers a type cause instead of throwing.
          validate(structuredClone(obj));
          if (decodeTypes(apiVersion, kind, obj) || decodeTypes(apiVersion, kind, old)) continue;
          applyDefaults(obj, { onCreate: true });
          applyDefaults(old);
          validate(structuredClone(obj));
          validate(obj, old);
          validate(obj, old, { subresource: 'status' });
        } catch (e) {
          throw new Error(`${kind} #${i} threw ${(e as Error).stack}\n  object: ${seen}`);
        }
      }
    });
  }

  it('a value of the wrong type is one FieldValueTypeInvalid cause naming the field', () => {
    const causes = validate({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
      spec: { replicas: '3' } } as KubeObject);
    expect(causes).toEqual([{ field: 'spec.replicas', reason: 'FieldValueTypeInvalid',
      message: 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas ' +
        'of type int32' }]);
  });
});
