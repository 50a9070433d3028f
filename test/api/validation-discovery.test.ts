import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type { EndpointSlice, Endpoints, Lease, ServiceCIDR } from '../../src/api/types.js';

function slice(addressType: EndpointSlice['addressType'], endpoints: EndpointSlice['endpoints'],
  ports: EndpointSlice['ports'] = [{ port: 80 }]): EndpointSlice {
  return applyDefaults({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'web-abc', namespace: 'default' }, addressType, endpoints, ports });
}

const fields = (o: EndpointSlice | Endpoints | Lease | ServiceCIDR): string[] =>
  validate(o).map((c) => `${c.field} ${c.reason}`);

describe('EndpointSlice validation', () => {
  it('checks addresses against the address type', () => {
    expect(validate(slice('IPv4', [{ addresses: ['10.244.1.5'], nodeName: 'n1' }]))).toEqual([]);
    expect(validate(slice('IPv6', [{ addresses: ['fd00::5'] }]))).toEqual([]);
    expect(validate(slice('IPv4', [{ addresses: ['fd00::5', '127.0.0.1'] }, { addresses: [] }]))
      .map((c) => `${c.field}: ${c.message}`)).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "fd00::5": must be a valid IPv4 address',
      'endpoints[0].addresses[1]: Invalid value: "127.0.0.1": may not be in the loopback range '
        + '(127.0.0.0/8, ::1/128)',
      'endpoints[1].addresses: Required value: must contain at least 1 address',
    ]);
    expect(fields(slice('FQDN', [{ addresses: ['db.example.com', 'nodots'] }])))
      .toEqual(['endpoints[0].addresses[1] FieldValueInvalid']);
  });
  it('limits endpoints to 1000 and ports to 100', () => {
    const many = Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] }));
    expect(validate(slice('IPv4', many)).map((c) => c.message))
      .toEqual(['Too many: 1001: must have at most 1000 items']);
    const ports = Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, port: 1000 + i }));
    expect(fields(slice('IPv4', [], ports))).toEqual(['ports FieldValueTooMany']);
  });
  it('checks ports and the address type', () => {
    expect(fields(slice('IPX' as 'IPv4', [], [{ name: 'a', port: 0 }, { name: 'a', port: 80,
      protocol: 'ICMP' as 'TCP' }]))).toEqual([
      'addressType FieldValueNotSupported',
      'ports[0].port FieldValueInvalid',
      'ports[1].name FieldValueDuplicate',
      'ports[1].protocol FieldValueNotSupported',
    ]);
  });
});

describe('Endpoints, Lease and ServiceCIDR validation', () => {
  it('checks Endpoints subsets', () => {
    const ep = applyDefaults({ apiVersion: 'v1', kind: 'Endpoints',
      metadata: { name: 'e', namespace: 'default' },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }, { port: 81 }] }, {}] },
    ) as Endpoints;
    expect(fields(ep)).toEqual(['subsets[0].ports[0].name FieldValueRequired',
      'subsets[0].ports[1].name FieldValueRequired', 'subsets[1] FieldValueRequired']);
  });
  it('requires positive lease durations', () => {
    const l: Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: { name: 'n1', namespace: 'kube-node-lease' },
      spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } };
    expect(fields(l)).toEqual(['spec.leaseDurationSeconds FieldValueInvalid',
      'spec.leaseTransitions FieldValueInvalid']);
  });
  it('accepts one CIDR per family and rejects the rest', () => {
    const sc = (cidrs: string[]): ServiceCIDR => ({ apiVersion: 'networking.k8s.io/v1',
      kind: 'ServiceCIDR', metadata: { name: 'kubernetes' }, spec: { cidrs } });
    expect(validate(sc(['10.96.0.0/12', 'fd00::/108']))).toEqual([]);
    expect(fields(sc([]))).toEqual(['spec.cidrs FieldValueRequired']);
    expect(fields(sc(['10.96.0.0/12', '10.100.0.0/16']))).toEqual(['spec.cidrs FieldValueInvalid']);
    expect(validate(sc(['10.96.0.0/33'])).map((c) => c.message)).toEqual([
      'Invalid value: "10.96.0.0/33": must be a valid CIDR value, '
        + '(e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ]);
  });
});
