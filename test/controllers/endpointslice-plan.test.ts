import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Pod, Service } from '../../src/api/types.js';
import { desiredGroups, findPort } from '../../src/controllers/endpointslice/desired.js';
import { planSlices } from '../../src/controllers/endpointslice/reconcile.js';
import { endpointSubsets } from '../../src/controllers/endpointslice/endpoints.js';

const svc: Service = { metadata: { name: 'web', namespace: 'default', uid: 'svc-uid', labels: { team: 'a' } },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } };

function pod(i: number, opts: { ready?: boolean; deleting?: boolean; portName?: string } = {}): Pod {
  return {
    metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}`, labels: { app: 'web' },
      ...(opts.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
    spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ name: opts.portName ?? 'http', containerPort: 8080 }] }] },
    status: { phase: 'Running', podIP: `10.244.${Math.floor(i / 250)}.${(i % 250) + 2}`,
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}

const node = { metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'z1' } } };

describe('endpointslice planning', () => {
  it('splits 250 endpoints into slices of at most 100', () => {
    const pods = Array.from({ length: 250 }, (_, i) => pod(i));
    const plan = planSlices(svc, 'IPv4', desiredGroups(svc, pods, 'IPv4', () => node), [], 100);
    expect(plan.create.map((s) => s.endpoints.length)).toEqual([100, 100, 50]);
    const s = plan.create[0]!;
    expect(s.metadata.generateName).toBe('web-');
    expect(s.metadata.labels).toEqual({ team: 'a', 'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' });
    expect(s.endpoints[0]).toEqual({ addresses: ['10.244.0.2'],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: 'default', name: 'p0', uid: 'u0' },
      nodeName: 'n1', zone: 'z1' });
  });

  it('marks terminating and not-ready pods, and resolves named target ports', () => {
    const pods = [pod(0), pod(1, { ready: false }), pod(2, { deleting: true })];
    const [g] = [...desiredGroups(svc, pods, 'IPv4', () => undefined).values()];
    expect(g!.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect([...g!.endpoints.values()].map((e) => e.conditions)).toEqual([
      { ready: true, serving: true, terminating: false },
      { ready: false, serving: false, terminating: false },
      { ready: false, serving: true, terminating: true },
    ]);
    expect(findPort(pod(3, { portName: 'other' }), svc.spec!.ports![0]!)).toBeUndefined();
  });

  it('updates existing slices in place, removing gone endpoints and filling room first', () => {
    const pods = Array.from({ length: 3 }, (_, i) => pod(i));
    const first = planSlices(svc, 'IPv4', desiredGroups(svc, pods, 'IPv4', () => node), [], 100);
    const existing: EndpointSlice[] = first.create.map((s, i) =>
      ({ ...s, metadata: { ...s.metadata, name: `web-${i}` } }));
    const next = [pod(1), pod(2), pod(3)];
    const plan = planSlices(svc, 'IPv4', desiredGroups(svc, next, 'IPv4', () => node), existing, 100);
    expect(plan.create).toEqual([]);
    expect(plan.remove).toEqual([]);
    expect(plan.update).toHaveLength(1);
    expect(plan.update[0]!.metadata.name).toBe('web-0');
    expect(plan.update[0]!.endpoints.map((e) => e.targetRef?.name)).toEqual(['p1', 'p2', 'p3']);
    const same = planSlices(svc, 'IPv4', desiredGroups(svc, pods, 'IPv4', () => node), existing, 100);
    expect(same).toEqual({ create: [], update: [], remove: [] });
  });

  it('keeps one empty placeholder slice for a service without endpoints', () => {
    const plan = planSlices(svc, 'IPv4', new Map(), [], 100);
    expect(plan.create).toHaveLength(1);
    expect(plan.create[0]!.endpoints).toEqual([]);
    expect(plan.create[0]!.ports).toBeUndefined();
  });

  it('v1 Endpoints put ready pods in addresses and not-ready in notReadyAddresses, skipping terminating', () => {
    const subsets = endpointSubsets(svc, [pod(0), pod(1, { ready: false }), pod(2, { deleting: true })]);
    expect(subsets).toHaveLength(1);
    expect(subsets[0]!.addresses?.map((a) => a.ip)).toEqual(['10.244.0.2']);
    expect(subsets[0]!.notReadyAddresses?.map((a) => a.ip)).toEqual(['10.244.0.3']);
    expect(subsets[0]!.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
  });
});
