// A kubelet that starts removes the log directories of pods that are no longer bound to it
// (removed while it was down), as upstream's orphaned pod cleanup; a bound pod's logs stay.

import { afterAll, describe, expect, it } from 'vitest';
import { buildNodeAgent } from '../../src/kubelet/node-agent.js';
import { memoryLogStore } from '../../src/kubelet/container-log-files.js';
import { buildVirtualRuntime } from '../../src/kubelet/runtime-virtual.js';
import { startApi, waitFor } from '../helpers/cluster.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

describe('container logs of orphaned pods', () => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => { for (const c of closers.reverse()) await c(); });

  it('go when the kubelet starts; a bound pod keeps its logs', async () => {
    const api = await startApi();
    closers.push(() => api.close());
    const bound = await api.client.create<{ metadata: { uid?: string } }>(PODS, { apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'kept' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'kdp/echo' }] } } as never);
    const store = memoryLogStore();
    store.open({ namespace: 'default', name: 'gone', uid: 'uid-gone' }, 'c', 0).close();
    store.open({ namespace: 'default', name: 'kept', uid: bound.metadata.uid! }, 'c', 0).close();
    const agent = buildNodeAgent({ client: api.client, nodeName: 'n1',
      runtime: buildVirtualRuntime({ logStore: store }), options: { nodeIP: '172.18.0.2' } });
    await agent.start();
    closers.push(() => agent.stop());
    await waitFor(() => !store.podUids().includes('uid-gone'), 10_000, 'the orphan to go');
    expect(store.podUids()).toEqual([bound.metadata.uid]);
  });
});
