import { describe, expect, it } from 'vitest';
import { categorizeEndpoints } from '../../src/proxy/topology.js';
import type { EndpointInfo, ServicePortInfo } from '../../src/proxy/types.js';

function svc(over: Partial<ServicePortInfo> = {}): ServicePortInfo {
  return {
    name: { namespace: 'ns', name: 's', port: 'http', protocol: 'TCP' }, clusterIP: '10.96.0.1',
    port: 80, protocol: 'TCP', nodePort: 0, loadBalancerVIPs: [], sessionAffinityClientIP: false,
    stickyMaxAgeSeconds: 0, externalIPs: [], loadBalancerSourceRanges: [], healthCheckNodePort: 0,
    externalPolicyLocal: false, internalPolicyLocal: false, hintsAnnotation: '', ...over,
  };
}

function ep(ip: string, over: Partial<EndpointInfo> = {}): EndpointInfo {
  return { ip, port: 80, endpoint: `${ip}:80`, isLocal: false, ready: true, serving: true,
    terminating: false, ...over };
}

const ctx = { nodeName: 'n1', zone: 'z1' };
const ips = (l: readonly EndpointInfo[]) => l.map((e) => e.ip);

describe('categorizeEndpoints', () => {
  it('uses every ready endpoint for Cluster policy', () => {
    const r = categorizeEndpoints([ep('1.0.0.1'), ep('1.0.0.2', { ready: false })], svc(), ctx);
    expect(ips(r.cluster)).toEqual(['1.0.0.1']);
    expect(r.local).toEqual([]);
    expect(r.hasAnyEndpoints).toBe(true);
  });

  it('falls back to serving terminating endpoints when none is ready', () => {
    const r = categorizeEndpoints([
      ep('1.0.0.1', { ready: false, terminating: true }),
      ep('1.0.0.2', { ready: false, serving: false, terminating: true }),
    ], svc(), ctx);
    expect(ips(r.cluster)).toEqual(['1.0.0.1']);
  });

  it('has no endpoints when nothing is ready or serving-terminating', () => {
    const r = categorizeEndpoints([ep('1.0.0.1', { ready: false, serving: false })], svc(), ctx);
    expect(r.hasAnyEndpoints).toBe(false);
    expect(r.allReachable).toEqual([]);
  });

  it('uses only same-zone endpoints when every ready endpoint has zone hints', () => {
    const eps = [ep('1.0.0.1', { zoneHints: new Set(['z1']) }),
      ep('1.0.0.2', { zoneHints: new Set(['z2']) })];
    expect(ips(categorizeEndpoints(eps, svc(), ctx).cluster)).toEqual(['1.0.0.1']);
    const noHint = [...eps, ep('1.0.0.3')];
    expect(ips(categorizeEndpoints(noHint, svc(), ctx).cluster)).toHaveLength(3);
    expect(ips(categorizeEndpoints(eps, svc(), { ...ctx, zone: 'z9' }).cluster)).toHaveLength(2);
  });

  it('prefers node hints over zone hints when the gate is on', () => {
    const eps = [ep('1.0.0.1', { nodeHints: new Set(['n1']), zoneHints: new Set(['z2']) }),
      ep('1.0.0.2', { nodeHints: new Set(['n2']), zoneHints: new Set(['z1']) })];
    expect(ips(categorizeEndpoints(eps, svc(), ctx).cluster)).toEqual(['1.0.0.1']);
    expect(ips(categorizeEndpoints(eps, svc(), { ...ctx, preferSameNode: false }).cluster))
      .toEqual(['1.0.0.2']);
  });

  it('gives local endpoints for iTP Local and no cluster endpoints when not external', () => {
    const eps = [ep('1.0.0.1', { isLocal: true }), ep('1.0.0.2')];
    const r = categorizeEndpoints(eps, svc({ internalPolicyLocal: true }), ctx);
    expect(r.cluster).toEqual([]);
    expect(ips(r.local)).toEqual(['1.0.0.1']);
    expect(ips(r.allReachable)).toEqual(['1.0.0.1']);
  });

  it('merges local serving-terminating endpoints into the reachable set for eTP Local', () => {
    const eps = [ep('1.0.0.1', { isLocal: true, ready: false, terminating: true }),
      ep('1.0.0.2')];
    const r = categorizeEndpoints(eps, svc({ externalPolicyLocal: true, nodePort: 30000 }), ctx);
    expect(ips(r.cluster)).toEqual(['1.0.0.2']);
    expect(ips(r.local)).toEqual(['1.0.0.1']);
    expect(ips(r.allReachable)).toEqual(['1.0.0.1', '1.0.0.2']);
  });
});
