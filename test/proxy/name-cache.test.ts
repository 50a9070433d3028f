import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '../../src/api/types.js';
import type { ProxyMode, SyncInput } from '../../src/proxy/backend.js';
import { compileConfigs, loadBackend } from '../../src/proxy/compile.js';
import { EndpointsChangeTracker } from '../../src/proxy/endpoints-change-tracker.js';
import { endpointChainName, hash16, servicePortChains }
  from '../../src/proxy/iptables/chain-names.js';
import { NameCache } from '../../src/proxy/iptables/name-cache.js';
import { DIRECT_NAMES, MemoNames } from '../../src/proxy/nftables/service-rules.js';
import { ServiceChangeTracker } from '../../src/proxy/service-change-tracker.js';
import type { EndpointInfo, ServicePortInfo } from '../../src/proxy/types.js';
import { generateServices } from '../helpers/service-generator.js';

/** The plain definition: base32 of SHA-256, first 16 characters. */
function referenceHash16(s: string): string {
  const d = createHash('sha256').update(s, 'utf8').digest();
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const b of d.subarray(0, 10)) bits += b.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < 80; i += 5) out += A[parseInt(bits.slice(i, i + 5), 2)];
  return out;
}

const svc = (port: string): ServicePortInfo => ({
  name: { namespace: 'ns', name: 'web', port, protocol: 'TCP' }, clusterIP: '10.96.0.10',
  port: 80, protocol: 'TCP', nodePort: 0, loadBalancerVIPs: [], sessionAffinityClientIP: false,
  stickyMaxAgeSeconds: 0, externalIPs: [], loadBalancerSourceRanges: [], healthCheckNodePort: 0,
  externalPolicyLocal: false, internalPolicyLocal: false, hintsAnnotation: '',
});
const ep = (ip: string): EndpointInfo => ({ ip, port: 8080, endpoint: `${ip}:8080`,
  isLocal: false, ready: true, serving: true, terminating: false });

function inputOf(n: number, mode: ProxyMode) {
  const [config] = compileConfigs({ objects: [], mode, nodeName: 'node-0',
    nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
  const st = new ServiceChangeTracker({ family: 'IPv4' });
  const et = new EndpointsChangeTracker({ family: 'IPv4', nodeName: 'node-0' });
  for (const o of generateServices(n, { seed: 7 })) {
    if (o.kind === 'Service') st.update(undefined, o as Service);
    else et.update(o as EndpointSlice);
  }
  const input: SyncInput = {
    services: st.checkout().services, endpoints: et.checkout().endpoints,
  };
  return { config: config!, input };
}

describe('chain names cached across syncs', () => {
  it('hash16 matches the plain SHA-256/base32 definition, non-ASCII input included', () => {
    const inputs = ['', 'ns/web:httptcp', 'ns/web:httptcp10.244.1.5:8080', 'ñ/ü:ßtcp',
      'x'.repeat(300), 'a'.repeat(55), 'a'.repeat(56), 'a'.repeat(64), 'é'.repeat(28) + 'x',
      '€😀'.repeat(20)];
    for (const s of inputs) expect(hash16(s)).toBe(referenceHash16(s));
  });

  it('iptables names equal the uncached functions\' and stale endpoints are pruned', () => {
    const cache = new NameCache();
    const info = svc('http');
    const names = cache.port(info);
    expect(cache.port(info)).toBe(names);
    expect(names).toMatchObject(servicePortChains('ns/web:http', 'tcp'));
    expect(names.clusterMatch).toBe('-m tcp -p tcp -d 10.96.0.10 --dport 80');
    const many = Array.from({ length: 40 }, (_, i) => ep(`10.244.0.${i + 1}`));
    for (const e of many) {
      expect(cache.sep(names, e)).toBe(endpointChainName('ns/web:http', 'tcp', e.endpoint));
    }
    cache.prune(names, many.slice(0, 2));
    expect([...names.seps.keys()]).toEqual(['10.244.0.1:8080', '10.244.0.2:8080']);
    expect(cache.port(svc('other'))).not.toBe(names);
  });

  it('nftables memoised names equal the direct ones, also after pruning', () => {
    const memo = new MemoNames();
    const info = svc('');
    const many = Array.from({ length: 40 }, (_, i) => ep(`10.244.1.${i + 1}`));
    expect(memo.servicePort(info)).toBe(DIRECT_NAMES.servicePort(info));
    for (const e of many) expect(memo.endpoint(info, e)).toBe(DIRECT_NAMES.endpoint(info, e));
    memo.prune(info, many.slice(0, 1));
    expect(memo.endpoint(info, many[5]!)).toBe(DIRECT_NAMES.endpoint(info, many[5]!));
  });

  for (const mode of ['iptables', 'nftables', 'ipvs'] as ProxyMode[]) {
    it(`${mode}: a forced full resync of the same proxier writes the rules a fresh one writes`,
      async () => {
        const backend = await loadBackend(mode);
        const { config, input } = inputOf(60, mode);
        const fresh = backend.buildProxier(config).sync(input);
        const p = backend.buildProxier(config);
        p.sync(input);
        p.commit(true);
        const again = p.sync({ services: input.services, endpoints: input.endpoints });
        expect(again.full).toBe(true);
        // nftables recreates its base chains on the first sync only: compare rules/elements.
        const text = (r: typeof fresh) => r.artifacts.map((a) => `${a.kind}\n${a.text}`).join('')
          .split('\n').filter((l) => mode !== 'nftables' || /^add (rule|element) /.test(l));
        expect(text(again).length).toBeGreaterThan(500);
        expect(text(again)).toEqual(text(fresh));
      });
  }
});
