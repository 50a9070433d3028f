import { describe, expect, it } from 'vitest';
import type { KubeObject, Client } from '../../src/client/types.js';
import type { Deployment, EndpointSlice, Pod, Service } from '../../src/api/types.js';

// Compile-time checks: typed kinds are KubeObjects and usable as Client type arguments.
type GetOf<T extends KubeObject> = (c: Client) => Promise<T>;
const getPod: GetOf<Pod> = (c) => c.get<Pod>({ group: '', version: 'v1', resource: 'pods' }, 'x');

describe('typed kinds', () => {
  it('are assignable to KubeObject', () => {
    const pod: Pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] } };
    const svc: Service = { metadata: { name: 's' }, spec: { ports: [{ port: 80 }] } };
    const dep: Deployment = {
      metadata: { name: 'd' },
      spec: { selector: {}, template: {} },
    };
    const es: EndpointSlice = { metadata: { name: 'e' }, addressType: 'IPv4', endpoints: [] };
    const objs: KubeObject[] = [pod, svc, dep, es];
    expect(objs.map((o) => o.metadata.name)).toEqual(['p', 's', 'd', 'e']);
    expect(typeof getPod).toBe('function');
  });
});
