import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';
import { buildTestServer } from '../apiserver/helpers/server.js';
import type { TestServer } from '../apiserver/helpers/server.js';

function np(spec: Record<string, unknown>, name = 'p'): NetworkPolicy {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
    metadata: { name, namespace: 'default' }, spec: { podSelector: {}, ...spec } } as NetworkPolicy;
}
const check = (o: NetworkPolicy) => validate(applyDefaults(o) as never);
const msgs = (o: NetworkPolicy) => check(o).map((c) => `${c.field}: ${c.message}`);

describe('NetworkPolicy defaulting (upstream SetDefaults_NetworkPolicy)', () => {
  it('policyTypes is Ingress alone without egress rules, protocol TCP', () => {
    const o = applyDefaults(np({ ingress: [{ ports: [{ port: 80 }] }] }));
    expect(o.spec.policyTypes).toEqual(['Ingress']);
    expect(o.spec.ingress![0]!.ports![0]!.protocol).toBe('TCP');
  });
  it('policyTypes gains Egress when egress rules exist; an explicit list is kept', () => {
    expect(applyDefaults(np({ egress: [{}] })).spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(applyDefaults(np({ egress: [{}], policyTypes: ['Egress'] })).spec.policyTypes)
      .toEqual(['Egress']);
  });
});

describe('NetworkPolicy validation (upstream ValidateNetworkPolicy)', () => {
  it('a full valid policy has no causes', () => {
    expect(check(np({
      podSelector: { matchLabels: { app: 'db' } },
      ingress: [{ from: [{ namespaceSelector: {}, podSelector: { matchLabels: { a: 'b' } } },
        { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }],
      ports: [{ port: 80, endPort: 90 }, { port: 'http', protocol: 'UDP' },
        { protocol: 'SCTP' }] }],
      egress: [{ to: [{ ipBlock: { cidr: '2001:db8::/32', except: ['2001:db8:1::/48'] } }] }],
    }))).toEqual([]);
  });
  it('endPort must be specified with a numeric port and be >= port', () => {
    expect(msgs(np({ ingress: [{ ports: [{ endPort: 90 }] }] }))).toEqual([
      'spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is '
      + 'not specified']);
    expect(msgs(np({ ingress: [{ ports: [{ port: 90, endPort: 80 }] }] }))).toEqual([
      'spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to '
      + '`port`']);
    expect(msgs(np({ egress: [{ ports: [{ port: 'web', endPort: 80 }] }] }))).toEqual([
      'spec.egress[0].ports[0].endPort: Invalid value: 80: may not be specified when `port` is '
      + 'non-numeric']);
  });
  it('protocol, port number and port name are checked with upstream wording', () => {
    expect(msgs(np({ ingress: [{ ports: [{ protocol: 'ICMP', port: 0 }, { port: 'Web_1' }] }] })))
      .toEqual([
        'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", '
        + '"UDP", "SCTP"',
        'spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
        'spec.ingress[0].ports[1].port: Invalid value: "Web_1": must contain only alpha-numeric '
        + 'characters (a-z, 0-9), and hyphens (-)',
      ]);
  });
  it('ipBlock: cidr required and valid, except a strict subset, not combined with selectors', () => {
    expect(msgs(np({ ingress: [{ from: [{ ipBlock: { cidr: '' } }] }] }))).toEqual([
      'spec.ingress[0].from[0].ipBlock.cidr: Required value']);
    expect(msgs(np({ ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/33' } }] }] }))).toEqual([
      'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR '
      + 'value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']);
    expect(msgs(np({ ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/16',
      except: ['10.0.0.0/16', '10.1.0.0/24', '10.0.5.0/24'] } }] }] }))).toEqual([
      'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.0.0.0/16": must be a strict '
      + 'subset of `cidr`',
      'spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "10.1.0.0/24": must be a strict '
      + 'subset of `cidr`']);
    expect(msgs(np({ egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} },
      {}] }] }))).toEqual([
      'spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer',
      'spec.egress[0].to[1]: Required value: must specify a peer']);
  });
  it('policyTypes: only Ingress and Egress, at most two', () => {
    expect(msgs(np({ policyTypes: ['Ingress', 'Foo'] }))).toEqual([
      'spec.policyTypes[1]: Unsupported value: "Foo": supported values: "Ingress", "Egress"']);
    expect(msgs(np({ policyTypes: ['Ingress', 'Egress', 'Ingress'] }))).toEqual([
      'spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: '
      + 'may not specify more than two policyTypes']);
  });
  it('selectors are validated as label selectors', () => {
    expect(msgs(np({ podSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } })))
      .toEqual(['spec.podSelector.matchExpressions[0].values: Required value: must be specified '
        + "when `operator` is 'In' or 'NotIn'"]);
  });
  it('an update keeps accepting a CIDR the old object already had', () => {
    const old = applyDefaults(np({ ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/33' } }] }] }));
    (old.metadata as Record<string, unknown>).resourceVersion = '1';
    const upd = structuredClone(old);
    upd.spec.ingress!.push({ from: [{ ipBlock: { cidr: '1.2.3.4/40' } }] });
    expect(validate(upd as never, old as never).map((c) => c.field))
      .toEqual(['spec.ingress[1].from[0].ipBlock.cidr']);
  });
});

describe('the API server serves networkpolicies', () => {
  let s: TestServer;
  const URL = '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies';
  beforeAll(async () => { s = await buildTestServer(); });
  afterAll(async () => { await s.done(); });

  it('an invalid policy is refused with 422 and every cause', async () => {
    const r = await s.req('POST', URL, np({ ingress: [{ ports: [{ port: 90, endPort: 80 },
      { endPort: 5 }] }] }, 'bad'));
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid',
      details: { name: 'bad', group: 'networking.k8s.io', kind: 'NetworkPolicy' } });
    expect(r.body.message).toBe('NetworkPolicy.networking.k8s.io "bad" is invalid: ['
      + 'spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to '
      + '`port`, spec.ingress[0].ports[1].endPort: Invalid value: 5: may not be specified when '
      + '`port` is not specified]');
    expect(r.body.details.causes).toHaveLength(2);
    expect(r.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid',
      field: 'spec.ingress[0].ports[0].endPort' });
  });
  it('a valid policy is stored defaulted and listed with NAME POD-SELECTOR AGE', async () => {
    const r = await s.req('POST', URL, np({ podSelector: { matchLabels: { app: 'web' } },
      egress: [{ ports: [{ port: 53 }] }] }, 'good'));
    expect(r.status).toBe(201);
    expect(r.body.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(r.body.spec.egress[0].ports[0].protocol).toBe('TCP');
    const t = await s.req('GET', URL, undefined,
      { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    expect(t.body.columnDefinitions.map((c: { name: string }) => c.name))
      .toEqual(['Name', 'Pod-Selector', 'Age']);
    expect(t.body.rows[0].cells.slice(0, 2)).toEqual(['good', 'app=web']);
  });
  it('a strategic-merge patch (kubectl apply) that breaks a rule is refused, nothing applied',
    async () => {
      const r = await s.req('PATCH', `${URL}/good`, { spec: { egress: [{ ports: [
        { port: 53, endPort: 52 }] }] } },
      { 'content-type': 'application/strategic-merge-patch+json' });
      expect(r.status).toBe(422);
      expect(r.body.details.causes[0].field).toBe('spec.egress[0].ports[0].endPort');
      const g = await s.req('GET', `${URL}/good`);
      expect(g.body.spec.egress[0].ports[0]).toEqual({ port: 53, protocol: 'TCP' });
      const ok = await s.req('PATCH', `${URL}/good`, { spec: { egress: [{ ports: [
        { port: 53, endPort: 60, protocol: 'UDP' }] }] } },
      { 'content-type': 'application/strategic-merge-patch+json' });
      expect(ok.status).toBe(200);
      expect(ok.body.spec.egress).toEqual([{ ports: [{ port: 53, endPort: 60, protocol: 'UDP' }] }]);
    });
});
