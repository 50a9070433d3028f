// Changing a Service's type with a patch that names only the type, as tutorials do
// (`kubectl patch svc web -p '{"spec":{"type":"ClusterIP"}}'`): upstream's dropTypeDependentFields
// wipes what the old type had and the client left alone — node ports, the health-check node port,
// allocateLoadBalancerNodePorts, loadBalancerClass, externalTrafficPolicy, the LB status — so the
// update validates instead of failing on fields the new type may not have.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildAdmittedServer, type AdmittedServer } from './helpers/admitted-server.js';

const SVCS = '/api/v1/namespaces/default/services';
const MERGE = { 'content-type': 'application/merge-patch+json' };

describe('Service type changes by patch', () => {
  let s: AdmittedServer;
  beforeEach(async () => { s = await buildAdmittedServer(); });
  afterEach(async () => { await s.done(); });

  it('LoadBalancer → ClusterIP drops the LoadBalancer-only fields and keeps the ClusterIP', async () => {
    const c = await s.req('POST', SVCS, { metadata: { name: 'web' }, spec: { type: 'LoadBalancer', selector: { app: 'web' },
      externalTrafficPolicy: 'Local', ports: [{ port: 80, targetPort: 8080 }] } });
    expect(c.status, c.text).toBe(201);
    expect(c.body.spec.ports[0].nodePort).toBeGreaterThan(0);
    expect(c.body.spec.healthCheckNodePort).toBeGreaterThan(0);
    expect(c.body.spec.allocateLoadBalancerNodePorts).toBe(true);
    const st = await s.req('PATCH', `${SVCS}/web/status`, { status: { loadBalancer: { ingress: [{ ip: '172.18.255.200' }] } } }, MERGE);
    expect(st.status, st.text).toBe(200);
    const p = await s.req('PATCH', `${SVCS}/web`, { spec: { type: 'ClusterIP' } }, MERGE);
    expect(p.status, p.text).toBe(200);
    expect(p.body.spec.type).toBe('ClusterIP');
    expect(p.body.spec.clusterIP).toBe(c.body.spec.clusterIP);
    expect(p.body.spec.ports[0].nodePort).toBeUndefined();
    expect(p.body.spec.healthCheckNodePort).toBeUndefined();
    expect(p.body.spec.allocateLoadBalancerNodePorts).toBeUndefined();
    expect(p.body.spec.externalTrafficPolicy).toBeUndefined();
    expect(p.body.status?.loadBalancer ?? {}).toEqual({});
  });

  it('NodePort → ClusterIP drops the node port; one the client changes in the same patch is an error', async () => {
    const c = await s.req('POST', SVCS, { metadata: { name: 'np' }, spec: { type: 'NodePort', selector: { app: 'np' },
      ports: [{ port: 80 }] } });
    expect(c.status, c.text).toBe(201);
    const bad = await s.req('PATCH', `${SVCS}/np`, { spec: { type: 'ClusterIP', ports: [{ port: 80, nodePort: 30123 }] } }, MERGE);
    expect(bad.status).toBe(422);
    expect(bad.text).toMatch(/nodePort/);
    const p = await s.req('PATCH', `${SVCS}/np`, { spec: { type: 'ClusterIP' } }, MERGE);
    expect(p.status, p.text).toBe(200);
    expect(p.body.spec.ports[0].nodePort).toBeUndefined();
    expect(p.body.spec.externalTrafficPolicy).toBeUndefined();
  });
});
