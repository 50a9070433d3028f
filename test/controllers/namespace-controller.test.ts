import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Namespace } from '../../src/api/types.js';
import { isKdpError } from '../../src/errors.js';
import { ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const NS = ref('namespaces');
const gone = async (p: Promise<unknown>) => {
  try { await p; return false; } catch (e) { return isKdpError(e, 'KDP_NOT_FOUND'); }
};

describe('the namespace controller empties and finalizes a Terminating namespace', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, scheduler: false,
      controllers: { controllers: ['namespace'] } });
  });
  afterAll(async () => { await c?.close(); });

  it('the API server only marks it; the controller deletes contents, events, then it',
    async () => {
      await c.client.create(NS, { apiVersion: 'v1', kind: 'Namespace',
        metadata: { name: 'lab' } });
      const CM = ref('configmaps', 'lab');
      await c.client.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
      await c.client.create(ref('events', 'lab'), { apiVersion: 'v1', kind: 'Event',
        metadata: { name: 'e' }, involvedObject: { kind: 'ConfigMap', name: 'x', namespace: 'lab' },
        reason: 'Test', message: 'm' });
      const marked = await c.client.delete<Namespace>(NS, 'lab');
      expect(marked.metadata.deletionTimestamp).toBeTruthy();
      await waitFor(() => gone(c.client.get(NS, 'lab')), 20_000, 'namespace gone');
      expect(await gone(c.client.get(CM, 'x'))).toBe(true);
      expect(await gone(c.client.get(ref('events', 'lab'), 'e'))).toBe(true);
    });
});
