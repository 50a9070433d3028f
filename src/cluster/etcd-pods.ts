// The local etcd cluster of `kdp up --etcd N` as kubeadm shows stacked etcd: a static pod
// `etcd` (labels component=etcd, tier=control-plane; hostNetwork; system-node-critical) per
// member, its command line the member's real flags, its container ID the member's PID
// (`kdp://PID`, from <data-dir>/etcd/<member>.pid) — and, for the componentstatuses endpoint,
// each etcd server's /health over the API server's client certificate, named etcd-0… in the
// order of the API server's --etcd-servers, as upstream's.
// Placement: with at least as many nodes as members, member i is node i's (`etcd-n1`,
// `etcd-n2`, … as kubeadm's one member per control-plane node); otherwise every member is the
// control-plane node's, each under its member name (`etcd-0-n1`, `etcd-1-n1`, …).

import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import type { ComponentHealth } from '../apiserver/rest/component-status.js';
import type { StaticPod } from '../kubelet/static-pods.js';
import { clientURL, type EtcdLayout, type EtcdMember } from './etcd-cluster.js';

function pidOf(root: string, member: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(root, 'etcd', `${member}.pid`), 'utf8'));
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function etcdManifest(name: string, root: string, layout: EtcdLayout, m: EtcdMember): Pod {
  const peer = (x: EtcdMember) => `https://127.0.0.1:${x.peerPort}`;
  const pki = join(root, 'pki', 'etcd');
  const command = ['etcd', `--advertise-client-urls=${clientURL(m)}`, `--cert-file=${join(pki, `${m.name}.crt`)}`,
    '--client-cert-auth=true', `--data-dir=${join(root, 'etcd', m.name)}`,
    `--initial-advertise-peer-urls=${peer(m)}`,
    `--initial-cluster=${layout.members.map((x) => `${x.name}=${peer(x)}`).join(',')}`,
    `--key-file=${join(pki, `${m.name}.key`)}`, `--listen-client-urls=${clientURL(m)}`,
    `--listen-peer-urls=${peer(m)}`, `--name=${m.name}`, `--peer-cert-file=${join(pki, `${m.name}.crt`)}`,
    '--peer-client-cert-auth=true', `--peer-key-file=${join(pki, `${m.name}.key`)}`,
    `--peer-trusted-ca-file=${join(pki, 'ca.crt')}`, `--trusted-ca-file=${join(pki, 'ca.crt')}`];
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'kube-system', labels: { component: 'etcd', tier: 'control-plane' },
      annotations: { 'kubeadm.kubernetes.io/etcd.advertise-client-urls': clientURL(m) } },
    spec: {
      hostNetwork: true, priorityClassName: 'system-node-critical', priority: 2000001000,
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      tolerations: [{ effect: 'NoExecute', operator: 'Exists' }],
      containers: [{ name: 'etcd', image: 'registry.k8s.io/etcd:3.5.21-0', command, imagePullPolicy: 'IfNotPresent',
        // kdp's etcd members are processes of this machine, not of the node: no requests.
        resources: { requests: { cpu: '0', memory: '0' } } }],
      restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', enableServiceLinks: true,
    },
  } as unknown as Pod;
}

/** Per node name, the etcd static pods it shows (see the header for the placement). */
export function etcdStaticPods(root: string, layout: EtcdLayout, nodes: readonly string[]): Map<string, StaticPod[]> {
  const out = new Map<string, StaticPod[]>();
  const spread = layout.members.length <= nodes.length;
  layout.members.forEach((m, i) => {
    const node = spread ? nodes[i]! : nodes[0]!;
    const list = out.get(node) ?? [];
    list.push({ manifest: etcdManifest(spread ? 'etcd' : m.name, root, layout, m), pid: pidOf(root, m.name) });
    out.set(node, list);
  });
  return out;
}

/** Each server's GET /health over mutual TLS, as upstream's componentstatus etcd-<i> entries:
 *  healthy with the body as message, or the failure as error. */
export async function etcdHealth(endpoints: readonly string[],
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {}, timeoutMs = 2000): Promise<ComponentHealth[]> {
  return Promise.all(endpoints.map((url, i) => new Promise<ComponentHealth>((resolve) => {
    const name = `etcd-${i}`;
    const target = new URL('/health', url);
    const get = target.protocol === 'http:' ? httpRequest : request;
    const req = get(target, { ca: tls.ca, cert: tls.cert, key: tls.key, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => {
        const ok = res.statusCode === 200 && /"health":\s*"true"/.test(body);
        resolve(ok ? { name, healthy: true, message: body.trim() }
          : { name, healthy: false, error: `${res.statusCode} ${body.trim()}`.trim() });
      });
    });
    req.on('error', (e) => resolve({ name, healthy: false, error: e.message }));
    req.on('timeout', () => { req.destroy(); resolve({ name, healthy: false, error: `Get "${url}/health": timeout` }); });
    req.end();
  })));
}
