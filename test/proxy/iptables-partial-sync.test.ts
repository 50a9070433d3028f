import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '../../src/api/types.js';
import type { ProxierConfig } from '../../src/proxy/backend.js';
import { buildProxierConfigs, parseKubeProxyConfiguration } from '../../src/proxy/config.js';
import { buildProxier } from '../../src/proxy/iptables/proxier.js';
import type { IptablesDeps } from '../../src/proxy/iptables/proxier.js';
import { ProxyPipeline } from '../../src/proxy/pipeline.js';
import { parse, tablesOf } from '../../src/ruleset/iptables/parse.js';
import { ep, service, slice } from '../helpers/proxy-objects.js';

function config(yaml = 'clusterCIDR: 10.244.0.0/16\n'): ProxierConfig {
  return buildProxierConfigs(parseKubeProxyConfiguration(yaml),
    { nodeName: 'n1', nodeIPs: ['172.18.0.2'] }, ['10.96.0.0/12'])[0]!;
}

function pipeline(deps?: IptablesDeps, cfg = config()): ProxyPipeline {
  return new ProxyPipeline(buildProxier(cfg, deps));
}

/** Per-service nat chains declared by a restore input, and the ones it deletes. */
function natChains(text: string): { declared: string[]; deleted: string[] } {
  const nat = tablesOf(parse(text)).find((t) => t.name === 'nat')!;
  const own = nat.chains.filter((c) => /^KUBE-(SVC|SVL|EXT|FW|SEP)-/.test(c.name));
  return {
    declared: own.filter((c) => !c.deleted).map((c) => c.name),
    deleted: own.filter((c) => c.deleted).map((c) => c.name),
  };
}

function addService(p: ProxyPipeline, name: string, ip: string, ips: string[]): EndpointSlice {
  p.onService(undefined, service('ns', name, { clusterIP: ip }));
  const s = slice('ns', name, `${name}-1`, ips.map((x) => ep(x, 'n2')));
  p.onEndpointSlice(s);
  return s;
}

function syncOk(p: ProxyPipeline) {
  const r = p.sync();
  p.commit(true);
  return { full: r.full, text: r.artifacts[0]!.text, origins: r.origins };
}

describe('iptables partial sync', () => {
  it('rewrites only the chains of a service added after the first full sync', () => {
    const p = pipeline();
    addService(p, 'a', '10.96.0.1', ['10.244.1.1']);
    const first = syncOk(p);
    expect(first.full).toBe(true);
    addService(p, 'b', '10.96.0.2', ['10.244.2.1', '10.244.2.2']);
    const second = syncOk(p);
    expect(second.full).toBe(false);
    expect(second.text).toContain('"ns/a:http cluster IP"');
    const { declared, deleted } = natChains(second.text);
    expect(declared).toHaveLength(3);
    expect(second.text).not.toMatch(/-A KUBE-SEP-\S+ -m comment --comment ns\/a:http/);
    expect(deleted).toEqual([]);
  });

  it('deletes the chain of a removed endpoint when a service scales down', () => {
    const p = pipeline();
    const s = addService(p, 'a', '10.96.0.1', ['10.244.1.1', '10.244.1.2']);
    const before = natChains(syncOk(p).text).declared;
    p.onEndpointSlice({ ...s, endpoints: [ep('10.244.1.1', 'n2')] });
    const after = natChains(syncOk(p).text);
    expect(after.declared).toHaveLength(2);
    expect(after.deleted).toHaveLength(1);
    expect(before).toContain(after.deleted[0]);
    expect(after.declared).not.toContain(after.deleted[0]);
  });

  it('flushes and deletes every chain of a deleted service and nothing else', () => {
    const p = pipeline();
    addService(p, 'a', '10.96.0.1', ['10.244.1.1']);
    const s = addService(p, 'b', '10.96.0.2', ['10.244.2.1']);
    const all = natChains(syncOk(p).text).declared;
    p.onService(service('ns', 'b', { clusterIP: '10.96.0.2' }), undefined);
    p.onEndpointSlice(s, true);
    const r = syncOk(p);
    expect(r.full).toBe(false);
    const { declared, deleted } = natChains(r.text);
    expect(declared).toEqual([]);
    expect(deleted.sort()).toEqual(all.filter((c) => !r.origins.has(c)).sort());
    expect(deleted).toHaveLength(2);
    expect(r.text).not.toContain('ns/b:http cluster IP');
  });

  it('makes the next sync full after a failed apply', () => {
    const p = pipeline();
    addService(p, 'a', '10.96.0.1', ['10.244.1.1']);
    syncOk(p);
    addService(p, 'b', '10.96.0.2', ['10.244.2.1']);
    p.sync();
    p.commit(false);
    const r = syncOk(p);
    expect(r.full).toBe(true);
    expect(natChains(r.text).declared).toHaveLength(4);
  });

  it('deletes stale kube-proxy chains found at start but leaves foreign chains alone', () => {
    const existingNatChains = ['KUBE-SVC-STALESTALESTALE1', 'KUBE-MY-OWN', 'DOCKER'];
    const p = pipeline({ existingNatChains });
    addService(p, 'a', '10.96.0.1', ['10.244.1.1']);
    const { deleted } = natChains(syncOk(p).text);
    expect(deleted).toEqual(['KUBE-SVC-STALESTALESTALE1']);
  });

  it('records the origin of every per-service chain', () => {
    const p = pipeline();
    p.onService(undefined, service('ns', 'a', { clusterIP: '10.96.0.1', type: 'NodePort',
      ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30001 }] }));
    p.onEndpointSlice(slice('ns', 'a', 'a-1', [ep('10.244.1.1', 'n2')]));
    const r = syncOk(p);
    const chains = natChains(r.text).declared;
    expect(chains).toHaveLength(3);
    for (const c of chains) expect(r.origins.get(c)?.servicePort).toBe('ns/a:http');
    const sep = chains.find((c) => c.startsWith('KUBE-SEP-'))!;
    expect(r.origins.get(sep)?.endpoint).toBe('10.244.1.1:8080');
  });

  it('skips the stale-chain scan in large-cluster mode until syncPeriod has passed', () => {
    let now = 0;
    const p = pipeline({ now: () => now });
    const ips = Array.from({ length: 1003 }, (_, i) => `10.245.${i >> 8}.${i & 255}`);
    const s = addService(p, 'big', '10.96.0.9', ips);
    syncOk(p);
    p.onEndpointSlice({ ...s, endpoints: s.endpoints.slice(0, 1002) });
    now = 1000;
    expect(natChains(syncOk(p).text).deleted).toEqual([]);
    p.onEndpointSlice({ ...s, endpoints: s.endpoints.slice(0, 1001) });
    now = 40_000;
    expect(natChains(syncOk(p).text).deleted).toHaveLength(2);
  });
});
