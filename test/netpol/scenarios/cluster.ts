// The upstream netpol e2e cluster (test/e2e/network/netpol/kubemanager.go) as objects:
// namespaces x, y, z (label ns=<name>), pods a, b, c (label pod=<name>), one container per
// port × protocol with the named port `serve-<port>-<proto>`, on ports 80 and 81.

import type { Namespace, Pod } from '../../../src/api/types.js';

export const NAMESPACES = ['x', 'y', 'z'] as const;
export const POD_NAMES = ['a', 'b', 'c'] as const;
export const ALL_PODS = NAMESPACES.flatMap((ns) => POD_NAMES.map((p) => `${ns}/${p}`));

/** Deterministic pod IPs: x → node n1 10.244.1.0/24, y → n2, z → n3; a/b/c → .10/.11/.12. */
export function ipOf(podKey: string): string {
  const [ns, name] = podKey.split('/') as [string, string];
  return `10.244.${NAMESPACES.indexOf(ns as 'x') + 1}.${10 + POD_NAMES.indexOf(name as 'a')}`;
}

export const nodeOf = (podKey: string): string =>
  `n${NAMESPACES.indexOf(podKey.split('/')[0] as 'x') + 1}`;

export const NODE_IPS = new Map([['n1', ['172.18.0.2']], ['n2', ['172.18.0.3']],
  ['n3', ['172.18.0.4']]]);

export function namespace(name: string, labels: Record<string, string> = {}): Namespace {
  return { apiVersion: 'v1', kind: 'Namespace',
    metadata: { name, labels: { ns: name, ...labels } } } as Namespace;
}

export function pod(key: string, labels?: Record<string, string>): Pod {
  const [ns, name] = key.split('/') as [string, string];
  const containers = [80, 81].flatMap((port) => ['TCP', 'UDP', 'SCTP'].map((proto) => ({
    name: `cont-${port}-${proto.toLowerCase()}`, image: 'agnhost',
    ports: [{ name: `serve-${port}-${proto.toLowerCase()}`, containerPort: port,
      protocol: proto }],
  })));
  return { apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: ns, labels: labels ?? { pod: name } },
    spec: { nodeName: nodeOf(key), containers },
    status: { podIP: ipOf(key), podIPs: [{ ip: ipOf(key) }] } } as unknown as Pod;
}
