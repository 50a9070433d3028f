// A write that changes nothing is not stored, even seconds later: managedFields times are kept
// (upstream's ignoreManagedFieldsTimestampsTransformer), so the revision does not move.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestServer, type TestServer } from './helpers/server.js';

describe('a no-op update a few seconds later', () => {
  let s: TestServer;
  let clock = Date.parse('2026-01-01T00:00:00Z');
  beforeEach(async () => { s = await buildTestServer({ now: () => new Date(clock) }); });
  afterEach(async () => { await s.done(); });

  const url = '/api/v1/namespaces/default/configmaps';

  it('merge patch, PUT of the same object and an update after a change', async () => {
    const c = await s.req('POST', url, { metadata: { name: 'u' }, data: { k: 'v' } });
    expect(c.status).toBe(201);
    const rev = s.store.currentRevision();
    const t0 = c.body.metadata.managedFields[0].time;
    clock += 5_000;
    const p = await s.req('PATCH', `${url}/u`, '{"data":{"k":"v"}}',
      { 'content-type': 'application/merge-patch+json' });
    expect(p.status).toBe(200);
    expect(s.store.currentRevision()).toBe(rev);
    expect(p.body.metadata.managedFields[0].time).toBe(t0);
    clock += 5_000;
    const u = await s.req('PUT', `${url}/u`, p.body);
    expect(u.status).toBe(200);
    expect(s.store.currentRevision()).toBe(rev);
    clock += 5_000;
    const w = await s.req('PATCH', `${url}/u`, '{"data":{"k":"w"}}',
      { 'content-type': 'application/merge-patch+json' });
    expect(s.store.currentRevision()).toBe(rev + 1);
    expect(w.body.metadata.managedFields[0].time).toBe('2026-01-01T00:00:15Z');
  });
});
