// Partial syncs of the nftables proxier: only changed services' chains are rewritten, shared
// set/map elements are diffed, stale chains are flushed at once and deleted a second later in
// an earlier transaction, and the kernel state after any sequence equals a fresh full sync
// (once stale chains are gone).

import { describe, expect, it } from 'vitest';
import type { EndpointSlice, KubeObject, Service } from '../../src/api/types.js';
import { compileConfigs, compileWith, feedObjects } from '../../src/proxy/compile.js';
import type { SyncResult } from '../../src/proxy/backend.js';
import { ProxyPipeline } from '../../src/proxy/pipeline.js';
import { hashAndTruncate } from '../../src/proxy/nftables/naming.js';
import * as nftables from '../../src/proxy/nftables/proxier.js';
import { sortTransactionText } from '../../src/ruleset/nftables/canonical.js';
import { applyTransaction, dumpOps } from '../../src/ruleset/nftables/fake.js';
import { emptyRuleset, type NftRuleset } from '../../src/ruleset/nftables/model.js';
import { formatTransaction, parseTransaction } from '../../src/ruleset/nftables/transaction.js';
import { feedDiff } from '../helpers/scenarios.js';

const CONFIG = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n'
  + 'mode: nftables\nclusterCIDR: 10.244.0.0/16\n';

function svc(name: string, ip: string, opts: { affinity?: boolean; nodePort?: number } = {}):
  Service {
  return {
    apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'ns', name },
    spec: {
      type: opts.nodePort ? 'NodePort' : 'ClusterIP', clusterIP: ip,
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080,
        ...(opts.nodePort ? { nodePort: opts.nodePort } : {}) }],
      ...(opts.affinity ? { sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 300 } } } : {}),
    },
  } as unknown as Service;
}

function slice(name: string, ips: readonly string[]): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { namespace: 'ns', name: `${name}-1`,
      labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: ips.map((ip) => ({ addresses: [ip], nodeName: 'node-b' })),
  } as unknown as EndpointSlice;
}

const opts = (objects: readonly KubeObject[]) => ({ objects, configText: CONFIG,
  nodeName: 'node-a', nodeIPs: ['172.18.0.2'] });

/** A proxier with a hand-driven clock and a fake kernel that applies every sync. */
function harness(initial: readonly KubeObject[]) {
  let now = 0;
  let kernel: NftRuleset = emptyRuleset();
  const config = compileConfigs(opts(initial))[0]!;
  const proxier = nftables.buildProxier(config, { now: () => now });
  const p = new ProxyPipeline(proxier);
  let prev: readonly KubeObject[] = [];
  const sync = (objects: readonly KubeObject[], applied = true): SyncResult => {
    if (prev.length === 0 && objects === initial) feedObjects(p, objects);
    else feedDiff(p, prev, objects);
    prev = objects;
    const r = p.sync();
    if (applied) {
      for (const a of r.artifacts) kernel = applyTransaction(kernel, parseTransaction(a.text));
    }
    p.commit(applied);
    return r;
  };
  return {
    sync,
    tick: (ms: number) => { now += ms; },
    dump: () => sortTransactionText(formatTransaction(dumpOps(kernel))),
  };
}

/** `service-HASH-ns/<svc>/tcp/http` and `endpoint-HASH-ns/<svc>/tcp/http__<ip>/8080`. */
const chain = (prefix: string, svc: string, ep?: string) => prefix + hashAndTruncate(
  `ns/${svc}/tcp/http${ep === undefined ? '' : `__${ep}/8080`}`);

const ops = (r: SyncResult) => r.artifacts.flatMap((a) => a.text.split('\n').filter(Boolean));
const fresh = (objects: readonly KubeObject[]) => compileWith(nftables, { ...opts(objects),
  canonical: true });

const A = [svc('a', '10.96.0.10'), slice('a', ['10.244.1.1', '10.244.1.2'])];
const B = [svc('b', '10.96.0.11'), slice('b', ['10.244.2.1', '10.244.2.2'])];

describe('nftables partial sync', () => {
  it('first sync is full, an unchanged resync is an empty transaction', () => {
    const h = harness(A);
    expect(h.sync(A).full).toBe(true);
    const again = h.sync(A);
    expect(again.full).toBe(false);
    expect(again.artifacts).toEqual([]);
  });

  it('adding a service with two endpoints costs 14 operations and touches nothing else', () => {
    const h = harness(A);
    h.sync(A);
    const r = h.sync([...A, ...B]);
    expect(r.full).toBe(false);
    expect(ops(r)).toHaveLength(14);
    expect(ops(r).every((l) => !l.includes('/a/'))).toBe(true);
    expect(h.dump()).toBe(fresh([...A, ...B]));
  });

  it('scaling rewrites only that service and leaves shared elements alone', () => {
    const h = harness([...A, ...B]);
    h.sync([...A, ...B]);
    const scaled = [...A, svc('b', '10.96.0.11'),
      slice('b', ['10.244.2.1', '10.244.2.2', '10.244.2.3'])];
    const r = h.sync(scaled);
    const lines = ops(r);
    expect(lines.some((l) => l.includes(' element '))).toBe(false);
    expect(lines).toContain(`add rule ip kube-proxy ${chain('service-', 'b')} numgen random `
      + `mod 3 vmap { 0 : goto ${chain('endpoint-', 'b', '10.244.2.1')} , 1 : goto `
      + `${chain('endpoint-', 'b', '10.244.2.2')} , 2 : goto `
      + `${chain('endpoint-', 'b', '10.244.2.3')} }`);
    expect(lines.every((l) => !l.includes('/a/'))).toBe(true);
    expect(h.dump()).toBe(fresh(scaled));
  });

  it('deleting a service flushes its chains now and deletes them a second later', () => {
    const h = harness([...A, ...B]);
    h.sync([...A, ...B]);
    const r1 = h.sync(A);
    const bChains = [chain('endpoint-', 'b', '10.244.2.1'), chain('endpoint-', 'b', '10.244.2.2'),
      chain('service-', 'b')].sort();
    expect(ops(r1)).toEqual([
      ...bChains.map((c) => `flush chain ip kube-proxy ${c}`),
      'delete element ip kube-proxy cluster-ips { 10.96.0.11 }',
      'delete element ip kube-proxy service-ips { 10.96.0.11 . tcp . 80 }',
    ]);
    h.tick(500);
    const r2 = h.sync(A);
    expect(r2.artifacts).toHaveLength(1);
    expect(ops(r2).every((l) => l.startsWith('flush chain'))).toBe(true);
    h.tick(1500);
    const r3 = h.sync(A);
    expect(r3.artifacts).toHaveLength(1);
    expect(ops(r3)).toEqual(bChains.map((c) => `delete chain ip kube-proxy ${c}`));
    expect(h.dump()).toBe(fresh(A));
  });

  it('a service losing its endpoints moves its ClusterIP element to no-endpoint-services', () => {
    const h = harness(A);
    h.sync(A);
    const none = [svc('a', '10.96.0.10'), slice('a', [])];
    const lines = ops(h.sync(none));
    expect(lines).toContain('delete element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 }');
    expect(lines).toContain('add element ip kube-proxy no-endpoint-services { 10.96.0.10 . tcp . 80'
      + ' comment "ns/a:http" : goto reject-chain }');
    expect(lines.some((l) => l.includes('cluster-ips'))).toBe(false);
  });

  it('a changed verdict for an existing key is a delete and an add of that element', () => {
    const np = [svc('a', '10.96.0.10', { nodePort: 30080 }), slice('a', ['10.244.1.1'])];
    const h = harness(np);
    h.sync(np);
    const none = [svc('a', '10.96.0.10', { nodePort: 30080 }), slice('a', [])];
    h.sync(none);
    const back = ops(h.sync(np));
    expect(back).toContain('add element ip kube-proxy service-nodeports { tcp . 30080 : goto '
      + `${chain('external-', 'a')} }`);
    expect(back).toContain('delete element ip kube-proxy no-endpoint-nodeports { tcp . 30080 }');
    expect(h.dump()).toBe(fresh(np));
  });

  it('an endpoint leaving an affinity service deletes its affinity set at once', () => {
    const aff = [svc('a', '10.96.0.10', { affinity: true }),
      slice('a', ['10.244.1.1', '10.244.1.2'])];
    const h = harness(aff);
    h.sync(aff);
    const one = [svc('a', '10.96.0.10', { affinity: true }), slice('a', ['10.244.1.1'])];
    const lines = ops(h.sync(one));
    expect(lines.filter((l) => l.startsWith('delete set'))).toEqual([
      `delete set ip kube-proxy ${chain('affinity-', 'a', '10.244.1.2')}`]);
    expect(lines).toContain(`add set ip kube-proxy ${chain('affinity-', 'a', '10.244.1.1')}`
      + ' { type ipv4_addr ; flags dynamic,timeout ; timeout 300s ; }');
  });

  it('after a failed apply the next sync is full and forgets pending stale chains', () => {
    const h = harness([...A, ...B]);
    h.sync([...A, ...B]);
    expect(h.sync(A, false).full).toBe(false);
    const r = h.sync(A);
    expect(r.full).toBe(true);
    expect(ops(r)).toContain(`flush chain ip kube-proxy ${chain('service-', 'b')}`);
    h.tick(2000);
    const later = h.sync(A);
    expect(ops(later)).toContain(`delete chain ip kube-proxy ${chain('service-', 'b')}`);
    expect(h.dump()).toBe(fresh(A));
  });

  it('reports the origin of every per-service chain and affinity set', () => {
    const aff = [svc('a', '10.96.0.10', { affinity: true }), slice('a', ['10.244.1.1'])];
    const h = harness(aff);
    const r = h.sync(aff);
    expect(r.origins.get(chain('service-', 'a'))).toEqual({ servicePort: 'ns/a:http' });
    expect(r.origins.get(chain('endpoint-', 'a', '10.244.1.1')))
      .toEqual({ servicePort: 'ns/a:http', endpoint: '10.244.1.1:8080' });
    expect(r.origins.get(chain('affinity-', 'a', '10.244.1.1')))
      .toEqual({ servicePort: 'ns/a:http', endpoint: '10.244.1.1:8080' });
  });
});
