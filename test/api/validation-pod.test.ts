import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type { Pod } from '../../src/api/types.js';

function pod(spec: Partial<NonNullable<Pod['spec']>>): Pod {
  return applyDefaults({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' },
    spec: { containers: [{ name: 'c', image: 'nginx:1' }], ...spec } } as Pod);
}

const fields = (p: Pod): string[] => validate(p).map((c) => `${c.field} ${c.reason}`);

describe('pod validation', () => {
  it('accepts a defaulted minimal pod', () => {
    expect(validate(pod({}))).toEqual([]);
  });
  it('reports every container problem with its path', () => {
    expect(fields(pod({ containers: [
      { name: 'Bad_Name', image: '', ports: [{ containerPort: 0 }, { containerPort: 70000,
        protocol: 'ICMP' as 'TCP', name: 'http' }, { containerPort: 80, name: 'http' }] },
      { name: 'Bad_Name', image: 'x' },
    ] }))).toEqual([
      'spec.containers[0].name FieldValueInvalid',
      'spec.containers[0].image FieldValueRequired',
      'spec.containers[0].ports[0].containerPort FieldValueRequired',
      'spec.containers[0].ports[1].containerPort FieldValueInvalid',
      'spec.containers[0].ports[1].protocol FieldValueNotSupported',
      'spec.containers[0].ports[2].name FieldValueDuplicate',
      'spec.containers[1].name FieldValueInvalid',
      'spec.containers[1].name FieldValueDuplicate',
    ]);
  });
  it('words unsupported protocols and restart policies like upstream', () => {
    const causes = validate(pod({ restartPolicy: 'Sometimes' as 'Always',
      containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80,
        protocol: 'ICMP' as 'TCP' }] }] }));
    expect(causes.map((c) => c.message)).toEqual([
      'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });
  it('requires containers and checks node name, tolerations and DNS', () => {
    expect(fields(pod({ containers: [], nodeName: 'Node_1', dnsPolicy: 'None',
      tolerations: [{ operator: 'Equal', value: 'x' }, { key: 'k', operator: 'Exists', value: 'v' },
        { key: 'k', tolerationSeconds: 5, effect: 'NoSchedule' }] }))).toEqual([
      'spec.containers FieldValueRequired',
      'spec.dnsConfig FieldValueRequired',
      'spec.nodeName FieldValueInvalid',
      'spec.tolerations[0].operator FieldValueInvalid',
      'spec.tolerations[1].operator FieldValueInvalid',
      'spec.tolerations[2].effect FieldValueInvalid',
    ]);
  });
  it('requires hostPort to equal containerPort under hostNetwork', () => {
    const p = pod({ hostNetwork: true,
      containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort: 8080 }] }] });
    expect(fields(p)).toEqual(['spec.containers[0].ports[0].hostPort FieldValueInvalid']);
  });
  it('validates status pod IPs', () => {
    const p = pod({});
    p.status = { podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.2' }, { ip: 'nope' }] };
    expect(fields(p)).toEqual(['status.podIPs[1].ip FieldValueInvalid',
      'status.podIPs FieldValueInvalid']);
  });
});
