// The real kubectl against kdp's NetworkPolicy: `kubectl apply` of an invalid policy gets
// upstream's 422 message with every cause; a valid one is created and listed by `get netpol`
// with NAME POD-SELECTOR AGE.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from '../apiserver/helpers/kubectl.js';

const MINORS = [27, 33].filter((m) => !kubectlMissing(m));

const BAD = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: bad, namespace: default}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress:
  - ports:
    - {port: 90, endPort: 80}
    - {protocol: ICMP}
    from:
    - ipBlock: {cidr: 10.0.0.0/16, except: [10.1.0.0/24]}
`;

const GOOD = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-from-web, namespace: default}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: web}}}]
    ports: [{port: 5432}]
`;

describe.skipIf(MINORS.length === 0).each(MINORS)('kubectl 1.%i with NetworkPolicy', (minor) => {
  let h: KubectlHarness;
  const k = (args: string[]) => h.kubectl(args, { minor, timeoutMs: 60_000 });
  // The server validates (that is what is tested here); kubectl < 1.29 reads /openapi/v2.
  const apply = async (name: string, text: string) => k(['apply', '-f',
    await h.file(name, text)]);
  beforeAll(async () => { h = await startKubectlHarness(); });
  afterAll(async () => { await h?.close(); });

  it('apply of an invalid policy is refused with upstream\'s causes', async () => {
    const r = await apply('bad.yaml', BAD);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('The NetworkPolicy "bad" is invalid: ');
    expect(r.stderr).toContain('spec.ingress[0].ports[0].endPort: Invalid value: 80: must be '
      + 'greater than or equal to `port`');
    expect(r.stderr).toContain('spec.ingress[0].ports[1].protocol: Unsupported value: "ICMP": '
      + 'supported values: "TCP", "UDP", "SCTP"');
    expect(r.stderr).toContain('spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: '
      + '"10.1.0.0/24": must be a strict subset of `cidr`');
    expect((await k(['get', 'netpol', 'bad'])).code).not.toBe(0);
  });
  it('apply of a valid policy creates it; get netpol shows NAME POD-SELECTOR AGE', async () => {
    const r = await apply('good.yaml', GOOD);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('networkpolicy.networking.k8s.io/db-from-web created');
    const g = await k(['get', 'netpol']);
    const [head, row] = g.stdout.trim().split('\n');
    expect(head!.split(/\s+/)).toEqual(['NAME', 'POD-SELECTOR', 'AGE']);
    expect(row!.split(/\s+/).slice(0, 2)).toEqual(['db-from-web', 'app=db']);
    const y = await k(['get', 'netpol', 'db-from-web', '-o', 'jsonpath={.spec.policyTypes}']);
    expect(y.stdout).toBe('["Ingress"]');
  });
});
