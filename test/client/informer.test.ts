import { describe, expect, it } from 'vitest';
import { kdpError } from '../../src/errors.js';
import { buildInformer } from '../../src/client/informer.js';
import type {
  Client, KubeObject, WatchEvent, WatchHandlers, WatchOptions,
} from '../../src/client/types.js';

/** A scripted client: lists return `state`, watches are captured for the test to drive. */
function fakeClient() {
  const state = { items: [] as KubeObject[], rv: '10', lists: 0, failWatchOnce: false };
  const watches: Array<{ opts: WatchOptions; h: WatchHandlers; stopped: boolean }> = [];
  const client = {
    async list() {
      state.lists++;
      return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: state.rv },
        items: structuredClone(state.items) };
    },
    watch(_r: unknown, opts: WatchOptions, h: WatchHandlers) {
      const w = { opts, h, stopped: false };
      watches.push(w);
      return { stop() { w.stopped = true; } };
    },
  } as unknown as Client;
  return { client, state, watches };
}

const pod = (name: string, rv: string, nodeName?: string): KubeObject =>
  ({ metadata: { name, namespace: 'ns', resourceVersion: rv }, spec: { nodeName } });
const tick = () => new Promise((r) => setTimeout(r, 5));
const until = async (f: () => boolean) => { for (let i = 0; i < 400 && !f(); i++) await tick(); };

describe('shared informer', () => {
  it('lists, then watches from the list resourceVersion and keeps an indexed cache', async () => {
    const { client, state, watches } = fakeClient();
    state.items = [pod('a', '5', 'n1')];
    const inf = buildInformer(client, { group: '', version: 'v1', resource: 'pods' }, {
      indexers: { node: (o) => [String((o.spec as { nodeName?: string }).nodeName ?? '')] },
    });
    const seen: string[] = [];
    inf.addEventHandler({
      onAdd: (o) => seen.push(`add ${o.metadata.name}`),
      onUpdate: (_, o) => seen.push(`update ${o.metadata.name}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    inf.start();
    await inf.waitForSync();
    expect(inf.hasSynced()).toBe(true);
    await until(() => watches.length > 0);
    expect(watches[0]!.opts.resourceVersion).toBe('10');
    const ev = (e: WatchEvent) => watches.at(-1)!.h.onEvent(e);
    ev({ type: 'ADDED', object: pod('b', '11', 'n2') });
    ev({ type: 'MODIFIED', object: pod('a', '12', 'n2') });
    ev({ type: 'DELETED', object: pod('b', '13', 'n2') });
    expect(seen).toEqual(['add a', 'add b', 'update a', 'delete b']);
    expect(inf.cache.byIndex('node', 'n2').map((o) => o.metadata.name)).toEqual(['a']);
    expect(inf.cache.byIndex('node', 'n1')).toEqual([]);
    expect(inf.cache.getByName('ns', 'a')?.metadata.resourceVersion).toBe('12');
    expect(inf.lastResourceVersion()).toBe('13');
    inf.stop();
  });

  it('re-watches from the last resourceVersion when the stream closes', async () => {
    const { client, watches } = fakeClient();
    const inf = buildInformer(client, { group: '', version: 'v1', resource: 'pods' }, { retryMs: 1 });
    inf.start();
    await until(() => watches.length === 1);
    watches[0]!.h.onEvent({ type: 'ADDED', object: pod('a', '20') });
    watches[0]!.h.onEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '25' } } });
    watches[0]!.h.onClose?.();
    await until(() => watches.length === 2);
    expect(watches[1]!.opts.resourceVersion).toBe('25');
    inf.stop();
  });

  it('relists on 410 Gone and delivers the difference as add/update/delete', async () => {
    const { client, state, watches } = fakeClient();
    state.items = [pod('a', '5'), pod('b', '6')];
    const inf = buildInformer(client, { group: '', version: 'v1', resource: 'pods' }, { retryMs: 1 });
    const seen: string[] = [];
    inf.addEventHandler({
      onAdd: (o) => seen.push(`add ${o.metadata.name}`),
      onUpdate: (_, o) => seen.push(`update ${o.metadata.name}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    inf.start();
    await until(() => watches.length === 1);
    state.items = [pod('a', '30'), pod('c', '31')];
    state.rv = '40';
    watches[0]!.h.onEvent({ type: 'ERROR',
      object: { metadata: {}, kind: 'Status', code: 410, reason: 'Expired' } as KubeObject });
    await until(() => watches.length === 2);
    expect(state.lists).toBe(2);
    expect(seen).toEqual(['add a', 'add b', 'update a', 'add c', 'delete b']);
    expect(watches[1]!.opts.resourceVersion).toBe('40');
    expect(watches[0]!.stopped).toBe(true);
    inf.stop();
  });

  it('relists when the watch closes with a Gone error', async () => {
    const { client, state, watches } = fakeClient();
    const inf = buildInformer(client, { group: '', version: 'v1', resource: 'pods' }, { retryMs: 1 });
    inf.start();
    await until(() => watches.length === 1);
    watches[0]!.h.onClose?.(kdpError('KDP_GONE', 'too old resource version'));
    await until(() => state.lists === 2);
    expect(state.lists).toBe(2);
    inf.stop();
  });

  it('replays the cache as updates on resync and gives late handlers the current objects', async () => {
    const { client, state } = fakeClient();
    state.items = [pod('a', '1')];
    const inf = buildInformer(client, { group: '', version: 'v1', resource: 'pods' }, { resyncMs: 10 });
    inf.start();
    await inf.waitForSync();
    const seen: string[] = [];
    inf.addEventHandler({
      onAdd: (o) => seen.push(`add ${o.metadata.name}`),
      onUpdate: (a, b) => { if (a === b) seen.push(`resync ${b.metadata.name}`); },
    });
    await until(() => seen.includes('resync a'));
    expect(seen.slice(0, 2)).toEqual(['add a', 'resync a']);
    inf.stop();
  });
});
