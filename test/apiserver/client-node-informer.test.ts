// @kubernetes/client-node lists and watches kdp through its informer (list, then watch from the
// list's resourceVersion), as controllers written against client libraries do.
import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenApiServer } from '../../src/apiserver/serve.js';
import type { ListeningServer } from '../../src/apiserver/serve.js';
import { buildMemoryStore } from '../../src/store/index.js';
import type { StoreBackend } from '../../src/store/types.js';

describe('@kubernetes/client-node informer', () => {
  let store: StoreBackend;
  let srv: ListeningServer;
  let kc: KubeConfig;
  beforeAll(async () => {
    store = buildMemoryStore();
    srv = await listenApiServer({ store }, { port: 0, insecureHttp: true });
    await fetch(`${srv.url}/api/v1/namespaces`, { method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'default' } }) });
    kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'kdp', server: srv.url, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'kdp', cluster: 'kdp', user: 'u', namespace: 'default' }],
      currentContext: 'kdp',
    });
  });
  afterAll(async () => {
    await srv.close();
    await store.close();
  });

  it('sees existing objects, then adds, updates and deletes in order', async () => {
    const api = kc.makeApiClient(CoreV1Api);
    await api.createNamespacedConfigMap({ namespace: 'default',
      body: { metadata: { name: 'before' }, data: { a: '1' } } });
    const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/default/configmaps',
      () => api.listNamespacedConfigMap({ namespace: 'default' }));
    const seen: string[] = [];
    let wake = () => {};
    const note = (t: string) => (o: V1ConfigMap) => {
      seen.push(`${t}:${o.metadata?.name}`);
      wake();
    };
    informer.on('add', note('add'));
    informer.on('update', note('update'));
    informer.on('delete', note('delete'));
    const waitFor = async (n: number) => {
      while (seen.length < n) await new Promise<void>((r) => { wake = r; });
    };
    await informer.start();
    await waitFor(1);
    await api.createNamespacedConfigMap({ namespace: 'default',
      body: { metadata: { name: 'live' }, data: { a: '1' } } });
    await waitFor(2);
    await api.replaceNamespacedConfigMap({ name: 'live', namespace: 'default',
      body: { metadata: { name: 'live' }, data: { a: '2' } } });
    await waitFor(3);
    await api.deleteNamespacedConfigMap({ name: 'live', namespace: 'default' });
    await waitFor(4);
    await informer.stop();
    expect(seen).toEqual(['add:before', 'add:live', 'update:live', 'delete:live']);
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(['before']);
  });
});
