import { describe, expect, it } from 'vitest';
import { ValueCodec } from '../../src/store/value-codec.js';
import { buildMemoryStore } from '../../src/store/index.js';
import { mulberry32, podJson } from '../../bench/lib-store-pod-gen.js';

describe('the packed in-memory form of values', () => {
  const codec = new ValueCodec();

  it('round-trips pod JSON at well under its size', () => {
    const rnd = mulberry32(5);
    let raw = 0;
    let packed = 0;
    for (let i = 0; i < 200; i++) {
      const { json } = podJson(rnd, i, i % 2 ? 'running' : 'pending');
      const p = codec.pack(json);
      expect(codec.unpack(p)).toBe(json);
      raw += json.length;
      packed += p.length;
    }
    // ~0.37 with the default dictionary (0.62 when short connectors stole key quotes).
    expect(packed / raw).toBeLessThan(0.45);
  });

  it('keeps any text exactly, control characters and non-ASCII included', () => {
    for (const v of ['', 'v1', '\u0000x', 'a\u0001 b', '{"name":"\u00e9\u4e2d"}', '"k:{\\"name',
      '\u0001!', JSON.stringify({ s: '\u0002\u001f' }), 'T00:00:00Z":"']) {
      expect(codec.unpack(codec.pack(v))).toBe(v);
    }
  });

  it.each([true, false])('callers of the store only ever see the original text (packValues %s)',
    async (packValues) => {
    const s = buildMemoryStore({ packValues });
    const { json } = podJson(mulberry32(1), 0);
    const events: string[] = [];
    const w = s.watch('/p/', s.currentRevision(), {
      onEvents: (evs) => { for (const e of evs) events.push(e.kv.value, e.prevKv?.value ?? ''); },
    });
    await s.create('/p/a', json);
    await s.update('/p/a', json.replace('Running', 'Failed'));
    expect((await s.get('/p/a'))!.value).toBe(json.replace('Running', 'Failed'));
    expect((await s.list('/p/')).items[0]!.value).toBe(json.replace('Running', 'Failed'));
    expect((await s.list('/p/', { revision: 2 })).items[0]!.value).toBe(json);
    expect((await s.delete('/p/a')).value).toBe(json.replace('Running', 'Failed'));
    await new Promise((r) => setTimeout(r, 0));
    expect(events).toEqual([json, '', json.replace('Running', 'Failed'), json,
      json.replace('Running', 'Failed'), json.replace('Running', 'Failed')]);
    w.stop();
    await s.close();
  });

  it('an empty dictionary keeps values as they are', () => {
    const plain = new ValueCodec([]);
    expect(plain.pack('{"apiVersion":"v1"}')).toBe('{"apiVersion":"v1"}');
    expect(plain.unpack('\u0000x')).toBe('\u0000x');
  });
});
