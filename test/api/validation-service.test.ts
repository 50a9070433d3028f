import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type { Service, ServiceSpec } from '../../src/api/types.js';

function svc(spec: ServiceSpec, name = 'web'): Service {
  return applyDefaults({ apiVersion: 'v1', kind: 'Service',
    metadata: { name, namespace: 'default' }, spec } as Service);
}

const fields = (s: Service): string[] => validate(s).map((c) => `${c.field} ${c.reason}`);

describe('service validation', () => {
  it('accepts typical ClusterIP, NodePort, LoadBalancer and ExternalName services', () => {
    expect(validate(svc({ selector: { app: 'a' }, ports: [{ port: 80 }] }))).toEqual([]);
    expect(validate(svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }],
      clusterIP: '10.96.0.5', ipFamilies: ['IPv4'] }))).toEqual([]);
    expect(validate(svc({ type: 'LoadBalancer', ports: [{ port: 443 }],
      loadBalancerSourceRanges: ['10.0.0.0/8'], externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32000 }))).toEqual([]);
    expect(validate(svc({ type: 'ExternalName', externalName: 'db.example.com.' }))).toEqual([]);
    expect(validate(svc({ clusterIP: 'None' }))).toEqual([]);
  });
  it('requires a DNS-1035 name', () => {
    const c = validate(svc({ ports: [{ port: 80 }] }, '1web'));
    expect(c).toHaveLength(1);
    expect(c[0]!.message).toContain('a DNS-1035 label must consist of lower case alphanumeric');
    expect(c[0]!.message).toContain("(e.g. 'my-name',  or 'abc-123', regex used for validation is");
  });
  it('reports every port problem', () => {
    expect(fields(svc({ ports: [{ port: 0, name: 'a' }, { port: 80, targetPort: 'Bad-Name' },
      { port: 80, name: 'a', targetPort: 99999, nodePort: 30000 }] }))).toEqual([
      'spec.ports[0].port FieldValueInvalid',
      'spec.ports[0].targetPort FieldValueInvalid',
      'spec.ports[1].name FieldValueRequired',
      'spec.ports[1].targetPort FieldValueInvalid',
      'spec.ports[2].name FieldValueDuplicate',
      'spec.ports[2].targetPort FieldValueInvalid',
      'spec.ports[2].nodePort FieldValueForbidden',
      'spec.ports[2] FieldValueDuplicate',
    ]);
    expect(fields(svc({}))).toEqual(['spec.ports FieldValueRequired']);
  });
  it('requires an allocated health check port for Local load balancers', () => {
    expect(fields(svc({ type: 'LoadBalancer', ports: [{ port: 80 }],
      externalTrafficPolicy: 'Local' }))).toEqual(['spec.healthCheckNodePort FieldValueRequired']);
    expect(fields(svc({ ports: [{ port: 80 }], healthCheckNodePort: 30001 })))
      .toEqual(['spec.healthCheckNodePort FieldValueInvalid']);
  });
  it('checks type, affinity and traffic policies', () => {
    const s = svc({ ports: [{ port: 80 }], sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } } });
    expect(fields(s))
      .toEqual(['spec.sessionAffinityConfig.clientIP.timeoutSeconds FieldValueInvalid']);
    const bad = svc({ ports: [{ port: 80 }], type: 'Magic' as 'ClusterIP',
      externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Nearby' as 'Local' });
    expect(validate(bad).map((c) => c.message)).toEqual([
      'Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", '
        + '"LoadBalancer", "NodePort"',
      'Invalid value: "Local": may only be set for externally-accessible services',
      'Unsupported value: "Nearby": supported values: "Cluster", "Local"',
    ]);
  });
  it('checks cluster IPs, families, external IPs and source ranges', () => {
    expect(fields(svc({ ports: [{ port: 80 }], clusterIP: '10.96.0.300',
      externalIPs: ['127.0.0.1', '1.2.3.4', 'x'], loadBalancerSourceRanges: ['10.0.0.0/33'] })))
      .toEqual([
        'spec.clusterIPs[0] FieldValueInvalid',
        'spec.externalIPs[0] FieldValueInvalid',
        'spec.externalIPs[2] FieldValueInvalid',
        'spec.LoadBalancerSourceRanges FieldValueForbidden',
        'spec.LoadBalancerSourceRanges[0] FieldValueInvalid',
      ]);
    expect(validate(svc({ ports: [{ port: 80 }], clusterIP: '10.96.0.1',
      clusterIPs: ['10.96.0.1', '10.96.0.2'], ipFamilyPolicy: 'RequireDualStack' }))
      .map((c) => c.message)).toEqual(['Invalid value: []string{"10.96.0.1", "10.96.0.2"}: '
      + 'may specify no more than one IP for each IP family']);
    expect(fields(svc({ ports: [{ port: 80 }], clusterIP: 'fd00::1', ipFamilies: ['IPv4'] })))
      .toEqual(['spec.clusterIPs[0] FieldValueInvalid']);
  });
  it('forbids cluster IPs on ExternalName services and None on NodePort', () => {
    expect(fields(svc({ type: 'ExternalName', externalName: 'x', clusterIP: '10.0.0.1' })))
      .toEqual(['spec.clusterIPs FieldValueForbidden']);
    expect(fields(svc({ type: 'ExternalName' }))).toEqual(['spec.externalName FieldValueRequired']);
    expect(fields(svc({ type: 'NodePort', clusterIP: 'None', ports: [{ port: 80 }] })))
      .toContain('spec.clusterIPs[0] FieldValueInvalid');
  });
});

describe('service status validation', () => {
  it('checks load-balancer ingress entries on status writes', () => {
    const lb = svc({ type: 'LoadBalancer', ports: [{ port: 80 }] });
    const n = structuredClone(lb);
    n.status = { loadBalancer: { ingress: [{ ip: '203.0.113.7' }, { ip: 'x', ipMode: 'VIP' },
      { hostname: '1.2.3.4' }] } };
    expect(validate(n, lb, { subresource: 'status' }).map((c) => `${c.field} ${c.reason}`))
      .toEqual([
        'status.loadBalancer.ingress[0].ipMode FieldValueRequired',
        'status.loadBalancer.ingress[1].ip FieldValueInvalid',
        'status.loadBalancer.ingress[2].hostname FieldValueInvalid',
      ]);
    const cip = svc({ ports: [{ port: 80 }] });
    const withIngress = { ...cip, status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } } };
    expect(validate(withIngress, cip, { subresource: 'status' }).map((c) => c.reason))
      .toEqual(['FieldValueForbidden']);
  });
});
