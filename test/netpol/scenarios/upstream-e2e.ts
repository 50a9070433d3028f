// The upstream netpol e2e scenarios (kubernetes test/e2e/network/netpol/network_policy.go,
// "Netpol" TCP, UDP and SCTP contexts), transcribed as data: the pods each test creates, the
// policies it creates/updates/deletes, the labels it changes, and the expected reachability
// built exactly as the test builds it. `kdp:` scenarios are additions for endPort and named
// ports over UDP/SCTP, which the upstream file does not cover.
// The scenarios that name addresses (ipBlock) take the pods' IPs as a parameter: the offline
// cluster's (cluster.ts) by default, a live cluster's when run for real.

import { ipOf } from './cluster.js';
import type { Check, Protocol, Scenario } from './builders.js';
import { egress, ingress, nsSel, podSel, policy, policyML } from './builders.js';

const ALL = {};
const c = (port: number, protocol: Protocol, expect: Check['expect']): Check =>
  ({ port, protocol, expect });
const none: Check['expect'] = () => undefined;
const NS_NAME = 'kubernetes.io/metadata.name';
const NOT_X = { matchExpressions: [{ key: NS_NAME, operator: 'NotIn' as const, values: ['x'] }] };
/** makeLargeCIDRForIP: the /16 around the IP. */
const large = (ip: string): string => `${ip.split('.').slice(0, 2).join('.')}.0.0/16`;
/** The /24 around the IP (a node's pod range in both the offline and the live cluster). */
const subnet24 = (ip: string): string => `${ip.split('.').slice(0, 3).join('.')}.0/24`;

function defaultDenyIngress(protocol: Protocol): Scenario {
  return {
    name: `${protocol}: should support a 'default-deny-ingress' policy`,
    pods: ['x/a', 'x/b', 'y/a', 'y/b'],
    steps: [{ apply: [policy('x', protocol === 'TCP' ? 'deny-ingress' : 'deny-all', ALL,
      ingress())], checks: [c(80, protocol, (r) => r.expectPeer({}, { namespace: 'x' }, false))] }],
  };
}

function ports81(protocol: Protocol): Scenario {
  return {
    name: `${protocol}: should enforce policy based on Ports`,
    pods: ['x/a', 'x/b', 'y/a', 'z/a'],
    steps: [{ apply: [policyML('x', 'allow-ingress-on-port-81-ns-x', { pod: 'a' },
      ingress({ from: [{ namespaceSelector: nsSel('y') }], ports: [{ port: 81, protocol }] }))],
    checks: [c(81, protocol, (r) => r
      .expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false)
      .expectPeer({ namespace: 'z' }, { namespace: 'x', pod: 'a' }, false))] }],
  };
}

function nsAndPod(protocol: Protocol): Scenario {
  return {
    name: `${protocol}: should enforce policy to allow traffic only from a pod in a different `
      + 'namespace based on PodSelector and NamespaceSelector',
    pods: protocol === 'TCP' ? ['x/a', 'x/b', 'y/a', 'y/b', 'z/a'] : ['x/a', 'x/b', 'y/a'],
    steps: [{ apply: [policyML('x', 'allow-ns-y-pod-a-via-namespace-pod-selector', { pod: 'a' },
      ingress({ from: [{ namespaceSelector: nsSel('y'), podSelector: podSel('a') }] }))],
    checks: [c(80, protocol, (r) => r.expectAllIngress('x/a', false).expect('y/a', 'x/a', true))] }],
  };
}

export function upstreamScenarios(ip: (pod: string) => string = ipOf): readonly Scenario[] {
  return [
    defaultDenyIngress('TCP'),
    {
      name: "should support a 'default-deny-all' policy",
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [{ apply: [policy('x', 'deny-all', ALL, ingress(), egress())],
        checks: [c(80, 'TCP', (r) => r.expectPeer({}, { namespace: 'x' }, false)
          .expectPeer({ namespace: 'x' }, {}, false))] }],
    },
    {
      name: 'should enforce policy to allow traffic from pods within server namespace based on '
        + 'PodSelector',
      pods: ['x/a', 'x/b', 'x/c', 'y/a'],
      steps: [{ apply: [policyML('x', 'x-a-allows-x-b', { pod: 'a' },
        ingress({ from: [{ podSelector: podSel('b') }] }))],
      checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false).expect('x/b', 'x/a', true))] }],
    },
    {
      name: 'should enforce policy to allow ingress traffic for a target',
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [{ apply: [policy('x', 'deny-all', ALL, ingress()),
        policyML('x', 'allow-all-to-a', { pod: 'a' },
          ingress({ from: [{ podSelector: {}, namespaceSelector: {} }] }))],
      checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', true)
        .expectAllIngress('x/b', false))] }],
    },
    {
      name: 'should enforce policy to allow ingress traffic from pods in all namespaces',
      pods: ['x/a', 'x/b', 'y/a', 'z/a'],
      steps: [{ apply: [policyML('x', 'allow-from-another-ns', { pod: 'a' },
        ingress({ from: [{ namespaceSelector: { matchLabels: {} } }] }))],
      checks: [c(80, 'TCP', none)] }],
    },
    {
      name: 'should enforce policy to allow traffic only from a different namespace, based on '
        + 'NamespaceSelector',
      pods: ['x/a', 'x/b', 'y/a', 'z/a'],
      steps: [{ apply: [policyML('x', 'allow-client-a-via-ns-selector', { pod: 'a' },
        ingress({ from: [{ namespaceSelector: nsSel('y') }] }))],
      checks: [c(80, 'TCP', (r) => r
        .expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false)
        .expectPeer({ namespace: 'z' }, { namespace: 'x', pod: 'a' }, false))] }],
    },
    {
      name: 'should enforce policy based on PodSelector with MatchExpressions',
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [{ apply: [policyML('x', 'x-a-allows-x-b', { pod: 'a' }, ingress({ from: [{
        podSelector: { matchExpressions: [{ key: 'pod', operator: 'In', values: ['b'] }] } }] }))],
      checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false).expect('x/b', 'x/a', true))] }],
    },
    {
      name: 'should enforce policy based on NamespaceSelector with MatchExpressions',
      pods: ['x/a', 'x/b', 'y/a', 'z/a'],
      steps: [{ apply: [policyML('x', 'allow-ns-y-match-selector', { pod: 'a' }, ingress({ from: [{
        namespaceSelector: { matchExpressions: [{ key: NS_NAME, operator: 'In',
          values: ['y'] }] } }] }))],
      checks: [c(80, 'TCP', (r) => r
        .expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false)
        .expectPeer({ namespace: 'z' }, { namespace: 'x', pod: 'a' }, false))] }],
    },
    {
      name: 'should enforce policy based on PodSelector or NamespaceSelector',
      pods: ['x/a', 'x/b', 'x/c', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-ns-y-match-selector', { pod: 'a' }, ingress({ from: [
        { namespaceSelector: NOT_X }, { podSelector: podSel('b') }] }))],
      checks: [c(80, 'TCP', (r) => r.expect('x/a', 'x/a', false).expect('x/c', 'x/a', false))] }],
    },
    {
      name: 'should enforce policy based on PodSelector and NamespaceSelector',
      pods: ['x/a', 'x/b', 'y/a', 'y/b', 'z/b'],
      steps: [{ apply: [policyML('x', 'allow-ns-y-podselector-and-nsselector', { pod: 'a' },
        ingress({ from: [{ namespaceSelector: NOT_X, podSelector: podSel('b') }] }))],
      checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false).expect('y/b', 'x/a', true)
        .expect('z/b', 'x/a', true))] }],
    },
    {
      name: 'should enforce policy based on Multiple PodSelectors and NamespaceSelectors',
      pods: ['x/a', 'x/b', 'y/a', 'y/b', 'y/c'],
      steps: [{ apply: [policyML('x', 'allow-ns-y-z-pod-b-c', { pod: 'a' }, ingress({ from: [{
        namespaceSelector: NOT_X,
        podSelector: { matchExpressions: [{ key: 'pod', operator: 'In', values: ['b', 'c'] }] },
      }] }))],
      checks: [c(80, 'TCP', (r) => r
        .expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false)
        .expect('y/a', 'x/a', false))] }],
    },
    {
      name: 'should enforce policy based on any PodSelectors',
      pods: ['x/a', 'x/b', 'x/c'],
      steps: [{ apply: [policyML('x', 'allow-ns-x-pod-b-c', { pod: 'a' }, ingress({ from: [
        { podSelector: podSel('b') }, { podSelector: podSel('c') }] }))],
      checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false).expect('x/b', 'x/a', true)
        .expect('x/c', 'x/a', true))] }],
    },
    nsAndPod('TCP'),
    ports81('TCP'),
    {
      name: 'should enforce multiple, stacked policies with overlapping podSelectors',
      pods: ['x/a', 'x/b', 'y/a', 'y/b', 'z/a'],
      steps: [
        { apply: [policyML('x', 'allow-client-a-via-ns-selector', { pod: 'a' }, ingress({
          from: [{ namespaceSelector: nsSel('y') }], ports: [{ port: 81, protocol: 'TCP' }] }))],
        checks: [
          c(81, 'TCP', (r) => r.expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false)
            .expectPeer({ namespace: 'y' }, { namespace: 'x', pod: 'a' }, true)
            .expectPeer({ namespace: 'z' }, { namespace: 'x', pod: 'a' }, false)),
          c(80, 'TCP', (r) => r.expectAllIngress('x/a', false)),
        ] },
        { apply: [policyML('x', 'allow-client-a-via-ns-selector-80', { pod: 'a' }, ingress({
          from: [{ namespaceSelector: nsSel('y') }], ports: [{ port: 80, protocol: 'TCP' }] }))],
        checks: [c(80, 'TCP', (r) => r
          .expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false)
          .expectPeer({ namespace: 'y' }, { namespace: 'x', pod: 'a' }, true)
          .expectPeer({ namespace: 'z' }, { namespace: 'x', pod: 'a' }, false))] },
      ],
    },
    {
      name: 'should support allow-all policy',
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-all', {}, ingress({}))],
        checks: [c(80, 'TCP', none), c(81, 'TCP', none)] }],
    },
    {
      name: 'should allow ingress access on one named port',
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-all', {}, ingress({ ports: [{ port: 'serve-81-tcp' }] }))],
        checks: [c(81, 'TCP', none),
          c(80, 'TCP', (r) => r.expectPeer({}, { namespace: 'x' }, false))] }],
    },
    {
      name: 'should allow ingress access from namespace on one named port',
      pods: ['x/a', 'x/b', 'y/a', 'z/a'],
      steps: [{ apply: [policyML('x', 'allow-client-a-via-ns-selector-80', { pod: 'a' }, ingress({
        from: [{ namespaceSelector: nsSel('y') }],
        ports: [{ port: 'serve-80-tcp', protocol: 'TCP' }] }))],
      checks: [
        c(80, 'TCP', (r) => r.expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false)
          .expectPeer({ namespace: 'z' }, { namespace: 'x', pod: 'a' }, false)),
        c(81, 'TCP', (r) => r.expectAllIngress('x/a', false)),
      ] }],
    },
    {
      name: 'should allow egress access on one named port',
      pods: ['x/a', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-egress', {}, egress({ ports: [{ port: 'serve-80-tcp' }] }))],
        checks: [c(80, 'TCP', none),
          c(81, 'TCP', (r) => r.expectPeer({ namespace: 'x' }, {}, false))] }],
    },
    {
      name: 'should enforce updated policy',
      pods: ['x/a', 'y/a'],
      steps: [
        { apply: [policyML('x', 'allow-all-mutate-to-deny-all', {}, ingress({}))],
          checks: [c(81, 'TCP', none)] },
        { apply: [policyML('x', 'allow-all-mutate-to-deny-all', {}, ingress())],
          checks: [c(81, 'TCP', (r) => r.expectPeer({}, { namespace: 'x' }, false))] },
      ],
    },
    {
      name: 'should allow ingress access from updated namespace',
      pods: ['x/a', 'y/a'],
      steps: [
        { apply: [policyML('x', 'allow-client-a-via-ns-selector', { pod: 'a' }, ingress({
          from: [{ namespaceSelector: { matchLabels: { ns2: 'updated' } } }] }))],
        checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false))] },
        { namespaceLabels: { y: { ns: 'y', ns2: 'updated' } },
          checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false)
            .expectPeer({ namespace: 'y' }, {}, true))] },
      ],
    },
    {
      name: 'should allow ingress access from updated pod',
      pods: ['x/a', 'x/b'],
      steps: [
        { apply: [policyML('x', 'allow-client-a-via-pod-selector', { pod: 'a' }, ingress({
          from: [{ podSelector: { matchLabels: { pod: 'b', pod2: 'updated' } } }] }))],
        checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false))] },
        { podLabels: { 'x/b': { pod: 'b', pod2: 'updated' } },
          checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false)
            .expect('x/b', 'x/a', true))] },
      ],
    },
    {
      name: 'should deny ingress from pods on other namespaces',
      pods: ['x/a', 'x/b', 'y/a', 'z/a'],
      steps: [{ apply: [policy('x', 'deny-empty-policy', ALL, ingress({
        from: [{ podSelector: { matchLabels: {} } }] }))],
      checks: [c(80, 'TCP', (r) => r.expectPeer({ namespace: 'y' }, { namespace: 'x' }, false)
        .expectPeer({ namespace: 'z' }, { namespace: 'x' }, false))] }],
    },
    {
      name: 'should deny ingress access to updated pod',
      pods: ['x/a', 'y/a'],
      steps: [
        { apply: [policy('x', 'deny-ingress-via-label-selector',
          { matchLabels: { target: 'isolated' } }, ingress())], checks: [c(80, 'TCP', none)] },
        { podLabels: { 'x/a': { pod: 'a', target: 'isolated' } },
          checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false))] },
      ],
    },
    {
      name: 'should deny egress from pods based on PodSelector',
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [{ apply: [policy('x', 'deny-egress-pod-a', podSel('a'), egress())],
        checks: [c(80, 'TCP', (r) => r.expectAllEgress('x/a', false))] }],
    },
    {
      name: 'should deny egress from all pods in a namespace',
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [{ apply: [policy('x', 'deny-egress-ns-x', ALL, egress())],
        checks: [c(80, 'TCP', (r) => r.expectPeer({ namespace: 'x' }, {}, false))] }],
    },
    {
      name: 'should work with Ingress, Egress specified together',
      pods: ['x/a', 'x/b', 'x/c', 'y/a'],
      steps: [{ apply: [(() => {
        const p = policyML('x', 'allow-client-a-via-pod-selector', { pod: 'a' },
          ingress({ from: [{ podSelector: podSel('b') }] }));
        p.spec.egress = [{ ports: [{ port: 80 }] }];
        p.spec.policyTypes = ['Egress', 'Ingress'];
        return p;
      })()],
      checks: [
        c(80, 'TCP', (r) => r.expectAllIngress('x/a', false).expect('x/b', 'x/a', true)),
        c(81, 'TCP', (r) => r.expectAllIngress('x/a', false).expectAllEgress('x/a', false)
          .expect('x/b', 'x/a', true)),
      ] }],
    },
    {
      name: 'should support denying of egress traffic on the client side (even if the server '
        + 'explicitly allows this traffic)',
      pods: ['x/a', 'y/a', 'y/b'],
      steps: [{ apply: [
        policyML('x', 'allow-to-ns-y-pod-a', { pod: 'a' },
          egress({ to: [{ namespaceSelector: nsSel('y'), podSelector: podSel('a') }] })),
        policyML('y', 'allow-from-xa-on-ya-match-selector', { pod: 'a' },
          ingress({ from: [{ namespaceSelector: nsSel('x'), podSelector: podSel('a') }] })),
        policyML('y', 'allow-from-xa-on-yb-match-selector', { pod: 'b' },
          ingress({ from: [{ namespaceSelector: nsSel('x'), podSelector: podSel('a') }] })),
      ],
      checks: [c(80, 'TCP', (r) => r.expectPeer({ namespace: 'x', pod: 'a' }, {}, false)
        .expectPeer({}, { namespace: 'y', pod: 'a' }, false)
        .expectPeer({ namespace: 'x', pod: 'a' }, { namespace: 'y', pod: 'a' }, true)
        .expectPeer({}, { namespace: 'y', pod: 'b' }, false))] }],
    },
    {
      name: 'should enforce egress policy allowing traffic to a server in a different namespace '
        + 'based on PodSelector and NamespaceSelector',
      pods: ['x/a', 'y/a', 'y/b'],
      steps: [{ apply: [policyML('x', 'allow-to-ns-y-pod-a', { pod: 'a' },
        egress({ to: [{ namespaceSelector: nsSel('y'), podSelector: podSel('a') }] }))],
      checks: [c(80, 'TCP', (r) => r.expectAllEgress('x/a', false).expect('x/a', 'y/a', true))] }],
    },
    {
      name: 'should enforce ingress policy allowing any port traffic to a server on a specific '
        + 'protocol',
      pods: ['x/a', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-ingress-by-proto', { pod: 'a' },
        ingress({ ports: [{ protocol: 'TCP' }] }))],
      checks: [c(80, 'TCP', none),
        c(80, 'UDP', (r) => r.expectPeer({}, { namespace: 'x', pod: 'a' }, false))] }],
    },
    {
      name: 'should enforce multiple ingress policies with ingress allow-all policy taking '
        + 'precedence',
      pods: ['x/a', 'y/a'],
      steps: [
        { apply: [policyML('x', 'allow-ingress-port-80', {}, ingress({ ports: [{ port: 80 }] }))],
          checks: [c(81, 'TCP', (r) => r.expectPeer({}, { namespace: 'x' }, false))] },
        { apply: [policyML('x', 'allow-ingress', {}, ingress({}))], checks: [c(81, 'TCP', none)] },
      ],
    },
    {
      name: 'should enforce multiple egress policies with egress allow-all policy taking precedence',
      pods: ['x/a', 'y/a'],
      steps: [
        { apply: [policyML('x', 'allow-egress-port-80', {}, egress({ ports: [{ port: 80 }] }))],
          checks: [c(81, 'TCP', (r) => r.expectPeer({ namespace: 'x' }, {}, false))] },
        { apply: [policyML('x', 'allow-egress', {}, egress({}))], checks: [c(81, 'TCP', none)] },
      ],
    },
    {
      name: 'should stop enforcing policies after they are deleted',
      pods: ['x/a', 'y/a'],
      steps: [
        { apply: [policy('x', 'deny-all', ALL, ingress(), egress())],
          checks: [c(80, 'TCP', (r) => r.expectPeer({ namespace: 'x' }, {}, false)
            .expectPeer({}, { namespace: 'x' }, false))] },
        { delete: ['*'], checks: [c(80, 'TCP', none)] },
      ],
    },
    {
      name: 'should allow egress access to server in CIDR block',
      pods: ['x/a', 'y/a', 'y/b'],
      steps: [{ apply: [policyML('x', 'allow-client-a-via-cidr-egress-rule', { pod: 'a' },
        egress({ to: [{ ipBlock: { cidr: `${ip('y/b')}/32` } }] }))],
      checks: [c(80, 'TCP', (r) => r.expectAllEgress('x/a', false).expect('x/a', 'y/b', true))] }],
    },
    {
      name: 'should enforce except clause while egress access to server in CIDR block',
      pods: ['x/a', 'x/b', 'x/c'],
      steps: [{ apply: [policyML('x', 'allow-client-a-via-cidr-egress-rule', { pod: 'a' },
        egress({ to: [{ ipBlock: { cidr: large(ip('x/b')), except: [`${ip('x/b')}/32`] } }] }))],
      checks: [c(80, 'TCP', (r) => r.expect('x/a', 'x/b', false))] }],
    },
    {
      name: 'should ensure an IP overlapping both IPBlock.CIDR and IPBlock.Except is allowed',
      pods: ['x/a', 'x/b', 'x/c'],
      steps: [
        { apply: [policyML('x', 'allow-client-a-via-cidr-egress-rule', { pod: 'a' }, egress({ to: [
          { ipBlock: { cidr: large(ip('x/b')), except: [`${ip('x/b')}/32`] } }] }))],
        checks: [c(80, 'TCP', (r) => r.expect('x/a', 'x/b', false))] },
        { apply: [policyML('x', 'allow-client-a-via-cidr-egress-rule', { pod: 'a' },
          egress({ to: [{ ipBlock: { cidr: `${ip('x/b')}/32` } }] }))],
        checks: [c(80, 'TCP', (r) => r.expectAllEgress('x/a', false).expect('x/a', 'x/b', true))] },
      ],
    },
    {
      name: 'should enforce policies to check ingress and egress policies can be controlled '
        + 'independently based on PodSelector',
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [
        { apply: [policy('x', 'allow-egress-for-target', podSel('a'), egress({}))],
          checks: [c(80, 'TCP', none)] },
        { apply: [policy('x', 'deny-ingress-via-label-selector', podSel('a'), ingress())],
          checks: [c(80, 'TCP', (r) => r.expectAllIngress('x/a', false))] },
      ],
    },
    {
      name: "should not mistakenly treat 'protocol: SCTP' as 'protocol: TCP', even if the plugin "
        + "doesn't support SCTP",
      pods: ['x/a', 'y/a'],
      steps: [{ apply: [policy('x', 'deny-ingress', ALL, ingress()),
        policyML('x', 'allow-only-sctp-ingress-on-port-81', { pod: 'a' },
          ingress({ ports: [{ port: 81, protocol: 'SCTP' }] }))],
      checks: [c(81, 'TCP', (r) => r.expectPeer({}, { namespace: 'x' }, false))] }],
    },
    {
      name: 'should properly isolate pods that are selected by a policy allowing SCTP, even if the '
        + "plugin doesn't support SCTP",
      pods: ['x/a', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-only-sctp-ingress-on-port-80', { pod: 'a' },
        ingress({ ports: [{ port: 80, protocol: 'SCTP' }] }))],
      checks: [c(81, 'TCP', (r) => r.expectAllIngress('x/a', false))] }],
    },
    {
      name: 'should not allow access by TCP when a policy specifies only UDP',
      pods: ['x/a', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-only-udp-ingress-on-port-81', { pod: 'a' },
        ingress({ ports: [{ port: 81, protocol: 'UDP' }] }))],
      checks: [c(81, 'TCP', (r) => r.expectAllIngress('x/a', false))] }],
    },
    {
      name: 'should enforce policy to allow traffic based on NamespaceSelector with MatchLabels '
        + 'using default ns label',
      pods: ['x/a', 'x/b', 'y/a', 'z/a'],
      steps: [{ apply: [policyML('x', 'allow-client-a-via-ns-selector-for-immutable-ns-label',
        { pod: 'a' }, ingress({ from: [{ namespaceSelector: nsSel('y') }] }))],
      checks: [c(80, 'TCP', (r) => r
        .expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false)
        .expectPeer({ namespace: 'z' }, { namespace: 'x', pod: 'a' }, false))] }],
    },
    {
      name: 'should enforce policy based on NamespaceSelector with MatchExpressions using default '
        + 'ns label',
      pods: ['x/a', 'x/b', 'y/a', 'z/a'],
      steps: [{ apply: [policyML('x', 'allow-ns-y-match-selector-for-immutable-ns-label',
        { pod: 'a' }, egress({ to: [{ namespaceSelector: { matchExpressions: [
          { key: NS_NAME, operator: 'NotIn', values: ['y'] }] } }] }))],
      checks: [c(80, 'TCP', (r) => r.expectPeer({ namespace: 'x', pod: 'a' }, { namespace: 'y' },
        false))] }],
    },
    defaultDenyIngress('UDP'),
    ports81('UDP'),
    nsAndPod('UDP'),
    defaultDenyIngress('SCTP'),
    ports81('SCTP'),
    nsAndPod('SCTP'),
  ];
}
export const UPSTREAM_SCENARIOS = upstreamScenarios();

export function kdpScenarios(ip: (pod: string) => string = ipOf): readonly Scenario[] {
  return [
    {
      name: 'kdp: endPort admits the whole range and nothing outside it',
      pods: ['x/a', 'x/b', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-range', { pod: 'a' },
        ingress({ ports: [{ port: 79, endPort: 80, protocol: 'TCP' }] }))],
      checks: [c(80, 'TCP', none), c(81, 'TCP', (r) => r.expectAllIngress('x/a', false)),
        c(80, 'UDP', (r) => r.expectAllIngress('x/a', false))] }],
    },
    {
      name: 'kdp: a named UDP port resolves against the destination pod, not TCP',
      pods: ['x/a', 'y/a'],
      steps: [{ apply: [policyML('x', 'allow-udp-81', {}, ingress({
        ports: [{ port: 'serve-81-udp', protocol: 'UDP' }] }))],
      checks: [c(81, 'UDP', none), c(81, 'TCP', (r) => r.expectAllIngress('x/a', false)),
        c(80, 'UDP', (r) => r.expectAllIngress('x/a', false))] }],
    },
    {
      name: 'kdp: egress by SCTP named port with an ipBlock peer',
      pods: ['x/a', 'y/a', 'y/b'],
      steps: [{ apply: [policyML('x', 'egress-sctp', { pod: 'a' }, egress({
        to: [{ ipBlock: { cidr: subnet24(ip('y/a')), except: [`${ip('y/a')}/32`] } }],
        ports: [{ port: 'serve-80-sctp', protocol: 'SCTP' }] }))],
      checks: [c(80, 'SCTP', (r) => r.expectAllEgress('x/a', false).expect('x/a', 'y/b', true)),
        c(81, 'SCTP', (r) => r.expectAllEgress('x/a', false))] }],
    },
    {
      name: 'kdp: a policy in another namespace selects nothing here',
      pods: ['x/a', 'y/a', 'z/a'],
      steps: [{ apply: [policy('z', 'deny-all-z', podSel('nomatch'), ingress(), egress())],
        checks: [c(80, 'TCP', none)] }],
    },
  ];
}
export const KDP_SCENARIOS = kdpScenarios();
