import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { buildAuthorizer } from '../../src/apiserver/authz/index.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import type { WatchEvent } from '../../src/client/types.js';
import { isKdpError } from '../../src/errors.js';
import { buildTestServer, deployment } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' };

describe('in-process client', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer(); });
  afterEach(async () => { await s.done(); });

  it('creates, patches, lists and deletes with the same semantics as HTTP', async () => {
    const c = buildInProcessClient(s.service, ADMIN_USER);
    const d = await c.create(DEPLOY, deployment('web'));
    expect(d.metadata.generation).toBe(1);
    const p = await c.patch(DEPLOY, 'web', 'strategic',
      { spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:1.28' }] } } } });
    expect((p.spec as any).template.spec.containers[0].ports).toEqual([{ containerPort: 80,
      protocol: 'TCP' }]);
    const scale = await c.get(DEPLOY, 'web', { subresource: 'scale' });
    expect(scale.kind).toBe('Scale');
    const http = await s.req('GET', '/apis/apps/v1/namespaces/default/deployments/web');
    expect(http.body.metadata.resourceVersion).toBe(p.metadata.resourceVersion);
    expect((await c.list(DEPLOY)).items).toHaveLength(1);
    await c.delete(DEPLOY, 'web');
    await expect(c.get(DEPLOY, 'web')).rejects.toSatisfy((e) => isKdpError(e, 'KDP_NOT_FOUND'));
  });

  it('errors are KdpErrors with the code HTTP would answer', async () => {
    const c = buildInProcessClient(s.service, ADMIN_USER);
    const d = await c.create(DEPLOY, deployment('web'));
    await c.update(DEPLOY, { ...d, spec: { ...(d.spec as object), replicas: 2 } });
    await expect(c.update(DEPLOY, d)).rejects.toSatisfy((e) => isKdpError(e, 'KDP_CONFLICT'));
    await expect(c.create(DEPLOY, deployment('web')))
      .rejects.toSatisfy((e) => isKdpError(e, 'KDP_ALREADY_EXISTS'));
  });

  it('authorization applies to in-process callers too', async () => {
    await s.done();
    s = await buildTestServer({ authorizer: buildAuthorizer({ mode: 'RBAC',
      source: { list: async () => [] } }) });
    const c = buildInProcessClient(s.service, { name: 'jane', groups: ['system:authenticated'] });
    await expect(c.list(DEPLOY)).rejects.toSatisfy((e) => isKdpError(e, 'KDP_FORBIDDEN'));
  });

  it('watch delivers events and stops on request', async () => {
    const c = buildInProcessClient(s.service, ADMIN_USER);
    const events: WatchEvent[] = [];
    let wake = () => {};
    const h = c.watch(DEPLOY, {}, { onEvent: (e) => { events.push(e); wake(); } });
    await c.create(DEPLOY, deployment('a'));
    while (events.length < 1) await new Promise<void>((r) => { wake = r; });
    h.stop();
    await c.create(DEPLOY, deployment('b'));
    await new Promise((r) => setTimeout(r, 50));
    expect(events.map((e) => `${e.type}:${e.object.metadata.name}`)).toEqual(['ADDED:a']);
  });
});
