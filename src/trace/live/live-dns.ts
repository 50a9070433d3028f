// `kdp verify --live`'s DNS check: real lookups from a real pod on every node. `dig` runs in the
// pod's network namespace and asks each kube-dns ClusterIP, so the query is Service traffic
// through the node's kube-proxy rules to a coredns pod running kdp's DNS server; every Service
// name of the sample must answer its ClusterIPs (headless: its ready endpoints), as the
// offline check computes them from the objects.

import type { EndpointSlice, Service } from '../../api/types.js';
import { podNetnsName } from '../../kubelet/runtime-netns.js';
import { familyOf } from '../packet.js';
import type { VerifyCheck } from '../verify.js';
import { DNS_SERVICE, expectedAddresses } from '../verify-dns.js';
import type { LiveCluster } from './live-trace.js';

export interface LiveDnsInput {
  readonly services: readonly Service[];
  readonly slices: readonly EndpointSlice[];
  readonly zone: string;
  /** Service names asked per pod (the first N by namespace/name). */
  readonly n: number;
  /** The `dig` program; '' when there is none (the check is then skipped, saying so). */
  readonly dig: string;
}

export async function verifyLiveDns(cluster: LiveCluster, o: LiveDnsInput): Promise<VerifyCheck> {
  const c: VerifyCheck = { name: `live: Service names looked up with dig from a pod on every node (${o.n} per pod)`,
    cases: 0, failures: [] };
  const dns = o.services.find((s) => s.metadata.namespace === DNS_SERVICE.namespace &&
    s.metadata.name === DNS_SERVICE.name);
  const servers = (dns?.spec?.clusterIPs ?? []).filter((ip) => ip && ip !== 'None');
  if (!servers.length) return { ...c, skipped: 'no kube-dns Service (kdp up --no-dns)' };
  if (!o.dig) return { ...c, skipped: 'dig is not installed (Debian: bind9-dnsutils)' };
  const names = o.services.filter((s) => s.spec?.type !== 'ExternalName')
    .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`))
    .slice(0, o.n);
  const reps = new Map<string, { name: string; ip: string }>();
  for (const p of cluster.topo.pods) {
    if (!reps.has(p.node) && cluster.podUids.has(p.name)) reps.set(p.node, p);
  }
  for (const [node, pod] of reps) {
    const netns = podNetnsName(cluster.prefix, cluster.podUids.get(pod.name)!);
    const server = servers.find((s) => familyOf(s) === familyOf(pod.ip)) ?? servers[0]!;
    for (const svc of names) {
      const fqdn = `${svc.metadata.name}.${svc.metadata.namespace}.svc.${o.zone}`;
      const want = expectedAddresses(svc, o.slices);
      const types = [...new Set(want.map((ip) => (ip.includes(':') ? 'AAAA' : 'A')))];
      c.cases++;
      const got: string[] = [];
      let error = '';
      for (const type of types.length ? types : ['A']) {
        try {
          const r = await cluster.exec.run(o.dig, ['+short', '+time=2', '+tries=2', `@${server}`, fqdn, type],
            { netns, timeoutMs: 15_000 });
          got.push(...r.stdout.split('\n').map((l) => l.trim()).filter((l) => /^[0-9a-f.:]+$/i.test(l)));
        } catch (e) {
          error = (e as Error).message.split('\n')[0]!;
        }
      }
      got.sort();
      if (error || got.join(',') !== want.join(',')) {
        c.failures.push({ what: `${pod.name} (${node}) → ${fqdn} @${server}`,
          expected: want.join(', ') || 'no address', got: error || got.join(', ') || 'no address' });
      }
    }
  }
  return c;
}
